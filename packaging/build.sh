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
mkdir -p build
"$py" - <<'PY'
import json, platform, sys
from importlib.metadata import version
machine = platform.machine().lower()
# llama-cpp-python's CI wheels and our release builds use GGML_NATIVE=OFF with these baselines
requires = ["AVX2", "FMA"] if machine in ("x86_64", "amd64") else []
if "GGML_NATIVE=OFF" not in __import__("os").environ.get("CMAKE_ARGS", "") and requires:
    # a local build compiled llama.cpp for this very CPU (GGML_NATIVE=ON): it needs what this
    # CPU has, at least the baseline
    pass
json.dump({
    "version": version("llm-hardware-advisor"),
    "llama_cpp_python": version("llama-cpp-python"),
    "python": platform.python_version(),
    "platform": f"{sys.platform}-{machine}",
    "requires_cpu": requires,
}, open("build/build_info.json", "w"), indent=2)
PY
"$py" -m PyInstaller packaging/advisor.spec --noconfirm --distpath "$dist" --workpath "$work" \
  --log-level WARN
echo "built $dist/advisor"
