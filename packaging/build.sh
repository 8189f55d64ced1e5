#!/usr/bin/env bash
# Freeze the app with PyInstaller into dist/advisor/ (one folder), from the current Python
# environment (which must have the project and pyinstaller installed: pip install ".[package]").
#
#   packaging/build.sh            # then: dist/advisor/advisor-cli --smoke-test
#
# The CPU features the bundled llama.cpp needs are written to build_info.json inside the
# bundle, so the app can refuse an unsuitable CPU with a sentence instead of crashing.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
dist=${DIST_DIR:-dist}
work=${WORK_DIR:-build/pyinstaller}
# absolute: PyInstaller reads the spec (and ADVISOR_STAGE below) from the spec's folder
case "$work" in /*) ;; *) work="$PWD/$work" ;; esac
mkdir -p build
"$py" - <<'PY'
import json, os, platform, sys
from importlib.metadata import version
machine = platform.machine().lower()
native = "GGML_NATIVE=OFF" not in os.environ.get("CMAKE_ARGS", "")
requires = []
if machine in ("x86_64", "amd64"):
    if native:
        # llama.cpp compiled for this very CPU (pip's default, GGML_NATIVE=ON) uses every
        # vector extension it has: the bundle needs them all
        from numpy._core._multiarray_umath import __cpu_features__ as features
        wanted = ("AVX", "AVX2", "FMA3", "F16C", "AVX512F", "AVX512BW", "AVX512VL",
                  "AVX512VNNI", "AVX512BF16", "AVX512VBMI")
        requires = [f for f in wanted if features.get(f)]
    else:
        # release builds (GGML_NATIVE=OFF): the baseline of llama-cpp-python's own wheels
        requires = ["AVX2", "FMA"]
# what the About box and the third-party notices say about the bundled Qt and llama.cpp
from PySide6.QtCore import qVersion
from advisor.bench.llama_lib import vendored_llama_cpp_commit
json.dump({
    "version": version("llm-hardware-advisor"),
    "llama_cpp_python": version("llama-cpp-python"),
    "llama_cpp_commit": vendored_llama_cpp_commit(),
    "qt_version": qVersion(),
    "python": platform.python_version(),
    "platform": f"{sys.platform}-{machine}",
    "native_build": native,
    "requires_cpu": requires,
}, open("build/build_info.json", "w"), indent=2)
PY
# the package as pip installs it: the catalogue and the resources live inside it
stage="$work/stage"
rm -rf "$stage" && mkdir -p "$stage"
cp -r advisor "$stage/advisor"
cp -r device_db "$stage/advisor/device_db"
cp -r resources "$stage/advisor/resources"
rm -rf "$stage/advisor/device_db/tools"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
export ADVISOR_STAGE="$stage"
"$py" -m PyInstaller packaging/advisor.spec --noconfirm --distpath "$dist" --workpath "$work" \
  --log-level WARN
# the license and the third-party notices (written by the spec) where people and the
# installers look for them: beside the programs; then check the notices list every
# distribution inside the bundle
cp LICENSE "$dist/advisor/LICENSE"
cp "$dist/advisor/_internal/THIRD_PARTY_NOTICES.txt" "$dist/advisor/THIRD_PARTY_NOTICES.txt"
"$py" -m advisor.usecases.notices --check "$dist/advisor"
echo "built $dist/advisor"
