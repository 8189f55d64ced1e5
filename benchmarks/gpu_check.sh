#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (a few minutes): build llama-cpp-python
# with CUDA, then run on the GPU what this 2-core CPU machine cannot: parity with a CUDA
# llama-bench, NVIDIA detection, energy sampling (NVML) and the longest-context search.
# Results go to $OUT (or benchmarks/results/gpu-check-DATE/).
#
# usage: benchmarks/gpu_check.sh   (from the repository root; CUDA toolkit and nvidia-smi present)
set -euo pipefail
out=${OUT:-benchmarks/results/gpu-check-$(date +%F)}
mkdir -p "$out"
arch=${CUDA_ARCH:-90}
python3 -m venv /tmp/gpu-venv
. /tmp/gpu-venv/bin/activate
pip install -q --upgrade pip
CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$arch -DLLAVA_BUILD=OFF" \
  pip install -q -e ".[test]" 2>&1 | tail -3
nvidia-smi -q -x > "$out/nvidia-smi-q-x.xml" || true
nvidia-smi --query-gpu=name,memory.total,memory.free,power.draw,power.limit --format=csv \
  > "$out/nvidia-smi-query.csv" || true
# 1. detection as the app sees it
advisor detect --json > "$out/detect.json" 2> "$out/detect.err" || true
# 2. parity with llama-bench, built with CUDA from the same vendored llama.cpp
CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$arch" PYTHON=python \
  bash benchmarks/build_llama_bench.sh /tmp/llama-bench-cuda > "$out/llama-bench-path.txt"
python benchmarks/parity_llama_bench.py --llama-bench "$(cat "$out/llama-bench-path.txt")" \
  --gpu-layers 99 > "$out/parity.txt" 2>&1 || true
# 3. energy and the longest context on the GPU
advisor bench --synthetic llama-3.2-1b:q4_0 --pp 512 --tg 128 --batch 1,8 \
  --longest-context --json --no-save > "$out/bench-gpu.json" 2> "$out/bench-gpu.err" || true
python - "$out/bench-gpu.json" <<'PY' > "$out/summary.txt" || true
import json, sys
run = json.load(open(sys.argv[1]))
for t in run["tests"]:
    print(t["name"], round(t["tokens_per_s"], 1), "t/s", t.get("energy_method"),
          t.get("average_w"), "W", t.get("joules_per_token"), "J/token")
print("longest context", run.get("longest_context_tokens"), "predicted",
      run.get("predicted_longest_context_tokens"))
PY
cat "$out/summary.txt" "$out/parity.txt" 2>/dev/null | tail -40
