#!/usr/bin/env bash
# Prepare HERE (network, PyPI) everything benchmarks/gpu_check.sh needs on a borrowed GPU
# machine that has no network and no package index: a wheelhouse of the runtime dependencies
# of `advisor detect`, `advisor bench` and benchmarks/parity_llama_bench.py, and the llama.cpp
# source that the installed llama-cpp-python version vendors, pruned to what builds
# ggml, llama and llama-bench.
#
# usage: benchmarks/gpu_check_prepare.sh [CARRY_DIR]      (from anywhere; default build/gpu-carry)
#
# CARRY_DIR (ignored by git through build/) then holds:
#   wheels/                 pure wheels, and binary ones for each Python in GPU_CARRY_PYTHONS,
#                           numpy only for GPU_CARRY_NUMPY_PYTHONS (16 MB a version; the lent
#                           machine's python3 is 3.12 and has numpy already);
#                           llama_cpp_python-VERSION-py3-none-any.whl: its Python package from
#                           the sdist WITHOUT shared libraries (gpu_check.sh builds them)
#   requirements.txt        what gpu_check.sh installs (--no-index --find-links wheels/)
#   build-requirements.txt  the project's build backend ([build-system] requires: setuptools,
#                           wheel), in wheels/ too: gpu_check.sh installs the project from the
#                           tree with --no-build-isolation, offline
#   llama.cpp-src.tar.xz    vendor/llama.cpp of llama-cpp-python VERSION's sdist, pruned
#   llama-cpp-commit.txt    the commit the installed libraries report (labels the build there)
#   MANIFEST.txt            sizes, versions, sha256 of each file
# PySide6 and pyqtgraph are left out: the check runs the command line only.
#
# Environment: PYTHON (default .venv/bin/python), GPU_CARRY_PYTHONS (default "3.10 3.11 3.12"),
# GPU_CARRY_NUMPY_PYTHONS (default "3.12"). The sdist (76 MB) is cached in build/gpu-carry-cache.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
carry=${1:-build/gpu-carry}
cache=${GPU_CARRY_CACHE:-build/gpu-carry-cache}
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
pythons=${GPU_CARRY_PYTHONS:-3.10 3.11 3.12}
numpy_pythons=${GPU_CARRY_NUMPY_PYTHONS:-3.12}
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
start=$(date +%s)

version=$("$py" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
echo "llama-cpp-python $version (from $py)"

# 1. the sdist: llama.cpp's source and the binding's Python package, both of this version
mkdir -p "$cache"
sdist="$cache/llama_cpp_python-$version.tar.gz"
if [ ! -f "$sdist" ]; then
  "$py" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$version" \
    -d "$cache"
fi
src="$cache/llama_cpp_python-$version"
[ -f "$src/vendor/llama.cpp/CMakeLists.txt" ] || tar -xzf "$sdist" -C "$cache"

tmp="$carry.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/wheels"

# 2. requirements: the project's runtime dependencies without the GUI's, and the binding's own;
# apart, the project's build backend
"$py" - "$repo/pyproject.toml" "$src/PKG-INFO" "$tmp/requirements.txt" \
  "$tmp/build-requirements.txt" <<'PY'
import re
import sys
from email.parser import Parser

pyproject, pkg_info, out, build_out = sys.argv[1:]
try:
    import tomllib

    meta = tomllib.load(open(pyproject, "rb"))
    deps = meta["project"]["dependencies"]
    build = meta["build-system"]["requires"]
except ModuleNotFoundError:  # Python 3.10: read the lists by hand
    text = open(pyproject).read()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    deps = re.findall(r'^\s*"([^"]+)"', block, re.M)
    block = re.search(r"^requires = \[(.*?)\]", text, re.S | re.M).group(1)
    build = re.findall(r'"([^"]+)"', block)
gui = {"pyside6-essentials", "pyside6", "pyqtgraph"}
name = lambda r: re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].strip().lower()  # noqa: E731
keep = [d for d in deps if name(d) not in gui]
binding = [
    r for r in Parser().parsestr(open(pkg_info).read()).get_all("Requires-Dist") or []
    if "extra ==" not in r
]
lines = keep + [r for r in binding if name(r) not in {name(k) for k in keep}]
open(out, "w").write("\n".join(lines) + "\n")
open(build_out, "w").write("\n".join(build) + "\n")
PY
echo "requirements: $(tr '\n' ' ' < "$tmp/requirements.txt")"
echo "build requirements: $(tr '\n' ' ' < "$tmp/build-requirements.txt")"

# 3. wheels for each Python: resolved with their dependencies, binary only (nothing to build there)
{ grep -v '^llama-cpp-python' "$tmp/requirements.txt"; cat "$tmp/build-requirements.txt"; } \
  > "$cache/download-requirements.txt"
for v in $pythons; do
  d="$cache/wheels-$v"
  rm -rf "$d"
  # a failed download stops the script (the filter only drops this machine's mirror warnings)
  "$py" -m pip download --quiet --only-binary=:all: --python-version "$v" --implementation cp \
    "${platforms[@]}" --platform any -d "$d" -r "$cache/download-requirements.txt" 2>&1 |
    { grep -v "^WARNING: Location" || true; }
  for w in "$d"/*.whl; do
    case " $numpy_pythons " in *" $v "*) ;; *) [[ $(basename "$w") == numpy-* ]] && continue ;; esac
    cp -n "$w" "$tmp/wheels/"
  done
done

# 4. the binding's Python package as a pure wheel, without shared libraries: pip installs it
# offline with its metadata (the app reads its version), and gpu_check.sh adds the libraries
"$py" - "$src" "$version" "$tmp/wheels" <<'PY'
import base64
import hashlib
import sys
import zipfile
from pathlib import Path

src, version, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
dist = f"llama_cpp_python-{version}.dist-info"
wheel = out / f"llama_cpp_python-{version}-py3-none-any.whl"
files = {}
for f in sorted((src / "llama_cpp").rglob("*")):
    rel = f.relative_to(src)
    if f.is_file() and "__pycache__" not in rel.parts and rel.parts[1:2] != ("lib",):
        files[rel.as_posix()] = f.read_bytes()
files[f"{dist}/METADATA"] = (src / "PKG-INFO").read_bytes()
files[f"{dist}/WHEEL"] = (
    "Wheel-Version: 1.0\nGenerator: benchmarks/gpu_check_prepare.sh (no shared libraries)\n"
    "Root-Is-Purelib: true\nTag: py3-none-any\n"
).encode()
record = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(data)}")
record.append(f"{dist}/RECORD,,")
files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
    for path, data in files.items():
        z.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data,
                   compress_type=zipfile.ZIP_DEFLATED)
print(f"{wheel.name}: {len(files)} files, {wheel.stat().st_size / 1e6:.2f} MB")
PY

# 5. llama.cpp's source, only what builds ggml (CPU + CUDA), llama, llama-common and llama-bench
stage="$cache/stage"
rm -rf "$stage"
mkdir -p "$stage/llama.cpp/tools"
lc="$src/vendor/llama.cpp"
# other ggml backends (Vulkan, SYCL, Metal ...) are added only when asked for: left out
drop=()
for d in "$lc"/ggml/src/ggml-*/; do
  case $(basename "$d") in ggml-cpu | ggml-cuda | ggml-blas) ;; *) drop+=(--exclude="ggml/src/$(basename "$d")") ;; esac
done
(cd "$lc" && tar -cf - "${drop[@]}" CMakeLists.txt LICENSE cmake common ggml include licenses \
  src vendor tools/CMakeLists.txt tools/llama-bench tools/batched-bench) | tar -xf - -C "$stage/llama.cpp"
# the tools' CMakeLists adds every tool: keep the lines of the two that travel
"$py" - "$stage/llama.cpp/tools/CMakeLists.txt" <<'PY'
import re
import sys
from pathlib import Path

p = Path(sys.argv[1])
kept = {d.name for d in p.parent.iterdir() if d.is_dir()}
lines = [
    ln for ln in p.read_text().splitlines()
    if not (m := re.match(r"\s*add_subdirectory\((\S+)\)", ln)) or m.group(1) in kept
]
p.write_text("# pruned by benchmarks/gpu_check_prepare.sh: only the tools that travel\n"
             + "\n".join(lines) + "\n")
PY
XZ_OPT=-9 tar -C "$stage" --sort=name -cJf "$tmp/llama.cpp-src.tar.xz" llama.cpp
rm -rf "$stage"
"$py" -c 'from advisor.bench.llama_lib import vendored_llama_cpp_commit as c; print(c() or "")' \
  2>/dev/null | sed 's/ (ggml.*//' > "$tmp/llama-cpp-commit.txt" || true
echo "$version" > "$tmp/llama-cpp-python-version.txt"

# 6. manifest, then swap the new folder in
{
  echo "gpu-carry prepared $(date -u +%FT%TZ) by benchmarks/gpu_check_prepare.sh"
  echo "llama-cpp-python $version; llama.cpp commit $(cat "$tmp/llama-cpp-commit.txt")"
  echo "wheels for Python $pythons; numpy for $numpy_pythons"
  echo "size $(du -sb "$tmp" | cut -f1) bytes"
  echo
  (cd "$tmp" && find . -type f ! -name MANIFEST.txt | sort | while read -r f; do
    printf '%10d  %s  %s\n' "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)" "${f#./}"
  done)
} > "$tmp/MANIFEST.txt"
rm -rf "$carry"
mv "$tmp" "$carry"
size=$(du -sb "$carry" | cut -f1)
echo "carry: $carry, $(awk "BEGIN{printf \"%.1f\", $size/1048576}") MiB" \
  "($(ls "$carry/wheels" | wc -l) wheels), $(( $(date +%s) - start )) s"
