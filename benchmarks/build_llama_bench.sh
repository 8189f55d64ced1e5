#!/usr/bin/env bash
# Build llama.cpp's own `llama-bench` from the llama.cpp tree vendored in the installed
# llama-cpp-python version's sdist, with llama.cpp's default CPU flags (the same defaults
# llama-cpp-python's build uses), so a side-by-side comparison measures the same code.
#
# usage: benchmarks/build_llama_bench.sh [BUILD_DIR]   (prints the path of llama-bench)
set -euo pipefail
py=${PYTHON:-python3}
version=$("$py" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
build=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/llm-hardware-advisor/llama-bench-$version}
bin="$build/bin/llama-bench"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
src="$build/src"
mkdir -p "$src"
if [ ! -f "$src/llama_cpp_python-$version/vendor/llama.cpp/CMakeLists.txt" ]; then
  "$py" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$src" >&2
  tar -xzf "$src/llama_cpp_python-$version.tar.gz" -C "$src"
fi
cmake -S "$src/llama_cpp_python-$version/vendor/llama.cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=ON ${CMAKE_ARGS:-} >&2
cmake --build "$build" --target llama-bench llama-batched-bench -j "$(nproc 2>/dev/null || echo 2)" >&2
echo "$bin"
