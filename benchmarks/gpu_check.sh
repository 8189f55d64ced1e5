#!/usr/bin/env bash
# The one prepared check for the lent GPU machine (one NVIDIA H200, the CUDA toolkit, 16 cores,
# NO network and NO package index), in one command of under 9 minutes:
#   setup  a venv of the machine's python3 filled from the carried wheels (pip --no-index), the
#          project installed from this tree; llama.cpp (the version llama-cpp-python vendors)
#          built with CUDA for sm_90 (libllama, libggml*, llama-bench); LLAMA_CPP_LIB_PATH
#          points llama-cpp-python, and the app, at those libraries
#   a  advisor detect --json
#   d  advisor bench of llama-3.2-1b:q4_0 on the GPU: NVML energy, the longest context
#   e  advisor bench of a synthetic Qwen3-30B-A3B with --cpu-moe 4: the notes say what llama.cpp
#      moved to RAM
#   b  parity with llama-bench on the GPU (-ngl 99, synthetic dense models)
#   c  hybrid parity: --cpu-moe N against llama-bench -ngl 99 -ncmoe N (synthetic Qwen3-30B-A3B)
#   f  full-size synthetic files (the shapes published rows use) timed by llama-bench itself,
#      -ngl 99 pp512 tg128: what the speed model's prediction for this GPU is checked against
# run in the order a, f, b, c, d, e (the figures nothing else gives first), each boxed by
# `timeout` inside the whole
# script's budget; a step that fails or runs out of time is recorded in summary.txt and the
# next one runs. Prepare the carry HERE first: benchmarks/gpu_check_prepare.sh.
#
# usage (repository root; build/gpu-carry carried):  OUT=DIR benchmarks/gpu_check.sh
# environment:
#   OUT                 results (default benchmarks/results/gpu-check-DATE): 8 files, summary.txt
#                       first (setup.log ends up inside steps.log); no folders
#   GPU_CHECK_FULL      the full-size files of step f, shape:quant (default four; in the CPU
#                       rehearsal one small one)
#   GPU_CHECK_CPU=1     rehearsal where there is no GPU: llama.cpp built without CUDA, smaller
#                       tests, the hybrid parity (c) skipped, and (e) expects the app's refusal
#   GPU_CHECK_BUDGET_S  seconds for the whole script (default 550; 7200 with GPU_CHECK_CPU=1)
#   GPU_CHECK_WORK      scratch (default /tmp/gpu-check): venv, llama.cpp build, models, app
#                       folder; a build already there from the same source and flags is reused
#   GPU_CHECK_PYTHON    the interpreter the venv is made from (default python3, or the first of
#                       python3.12/3.11/3.10 the carried numpy wheel fits)
#   GPU_CHECK_VENV      venv | without-pip | target: how the packages are installed (default:
#                       the first that works, in that order)
#   GPU_CHECK_JOBS      build jobs (default: all cores)
#   GPU_CHECK_CARRY     the carried folder (default build/gpu-carry)
#   GPU_CHECK_ONLY      the steps to run, by name ("detect bench-gpu"; default all)
#   GPU_CHECK_CMAKE_ARGS  more -D flags for llama.cpp (e.g. -DGGML_CUDA_FA=OFF for a faster build)
set -uo pipefail # no -e: each step's failure is recorded, and the next step runs
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
t0=$(date +%s)
cpu_mode=${GPU_CHECK_CPU:-0}
[ "$cpu_mode" = 1 ] && default_budget=7200 || default_budget=550
budget=${GPU_CHECK_BUDGET_S:-$default_budget}
deadline=$((t0 + budget))
out=${OUT:-benchmarks/results/gpu-check-$(date +%F)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
carry=$(cd "${GPU_CHECK_CARRY:-build/gpu-carry}" 2>/dev/null && pwd) || carry=""
work=${GPU_CHECK_WORK:-/tmp/gpu-check}
jobs=${GPU_CHECK_JOBS:-$(nproc 2>/dev/null || echo 4)}
summary=$out/summary.txt
setup_log=$out/setup.log
steps_log=$out/steps.log
: >"$summary"
: >"$setup_log"
: >"$steps_log"
mkdir -p "$work"

# nothing reaches a package index: no pip configuration, no index, no cache
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_REQUIREMENT
export PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 ADVISOR_HOME=$work/home HF_HUB_OFFLINE=1

log() { echo "$*" | tee -a "$summary"; }
now() { date +%s; }
left() { echo $(($deadline - $(now))); }

# step NAME WANT_S MIN_S COMMAND: COMMAND (a bash string) under `timeout`, boxed to WANT_S or
# what is left of the budget (less RESERVE_S for the summary); skipped if under MIN_S remain.
RESERVE_S=15
step() {
  local name=$1 want=$2 min=$3 cmd=$4 box start rc status
  if [ -n "${GPU_CHECK_ONLY:-}" ] && [[ " $GPU_CHECK_ONLY " != *" $name "* ]]; then
    printf '%-14s SKIPPED: not in GPU_CHECK_ONLY\n' "$name" | tee -a "$summary"
    return 125
  fi
  box=$(($(left) - RESERVE_S))
  [ "$box" -gt "$want" ] && box=$want
  if [ "$box" -lt "$min" ]; then
    printf '%-14s SKIPPED: %ss left, needs %ss\n' "$name" "$box" "$min" | tee -a "$summary"
    return 125
  fi
  echo "=== $name (box ${box}s): $cmd" | tee -a "$steps_log" >&2
  start=$(now)
  timeout -k 10 "$box" bash -c "set -o pipefail; $cmd"
  rc=$?
  case $rc in
    0) status=ok ;;
    124 | 137) status="TIMED OUT after ${box}s" ;;
    *) status="FAILED rc=$rc" ;;
  esac
  printf '%-14s %-30s %4ds\n' "$name" "$status" $(($(now) - start)) | tee -a "$summary"
  return $rc
}

# the commit, where the tree came with its .git (a copy sent without it says 'no git')
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null) &&
  { git -C "$repo" diff --quiet HEAD 2>/dev/null || rev="$rev+changes"; } || rev="no git"
log "gpu_check.sh ($rev) on $(hostname), $(date -u +%FT%TZ), mode $([ "$cpu_mode" = 1 ] && echo 'CPU rehearsal' || echo GPU)," \
  "budget ${budget}s, $jobs jobs"
if [ -z "$carry" ] || [ ! -f "$carry/requirements.txt" ]; then
  log "no carry at ${GPU_CHECK_CARRY:-build/gpu-carry}: run benchmarks/gpu_check_prepare.sh here" \
    "and name build/gpu-carry in the run's carry"
  exit 2
fi
log "carry: $(du -sh "$carry" | cut -f1), $(head -2 "$carry/MANIFEST.txt" | tail -1)"
if [ "$cpu_mode" != 1 ]; then
  nvidia-smi --query-gpu=name,memory.total,memory.used,power.draw,power.limit,driver_version \
    --format=csv,noheader 2>&1 | sed 's/^/nvidia-smi: /' | tee -a "$summary"
  nvcc --version 2>&1 | tail -2 | head -1 | sed 's/^/nvcc: /' | tee -a "$summary"
fi

# ---------------------------------------------------------------------------------------------
# setup 1: Python packages, offline
# ---------------------------------------------------------------------------------------------
pick_python() {
  local c tag
  for c in ${GPU_CHECK_PYTHON:-} python3 python3.12 python3.11 python3.10; do
    command -v "$c" >/dev/null || continue
    tag=$("$c" -c 'import sys; print("cp%d%d" % sys.version_info[:2])' 2>/dev/null) || continue
    if [ -n "${GPU_CHECK_PYTHON:-}" ] || ls "$carry"/wheels/numpy-*-"$tag"-*.whl >/dev/null 2>&1; then
      echo "$c"
      return
    fi
  done
  echo python3 # nothing fits: let pip say why
}
sys_py=$(pick_python)
venv=$work/venv
site=$work/site
wheels=(--no-index --find-links "$carry/wheels")

install_env() { # sets PY (the interpreter every step runs) and PIP (pip install into it)
  local mode=${GPU_CHECK_VENV:-auto}
  rm -rf "$venv" "$site"
  if [[ $mode == auto || $mode == venv ]] && "$sys_py" -m venv "$venv"; then
    PY=$venv/bin/python PIP="$venv/bin/python -m pip install" env_kind="venv"
  elif [[ $mode == auto || $mode == without-pip ]] && "$sys_py" -m venv --without-pip "$venv" &&
    "$sys_py" -m pip --python "$venv/bin/python" --version; then
    PY=$venv/bin/python PIP="$sys_py -m pip --python $venv/bin/python install"
    env_kind="venv without pip, filled by $sys_py's pip"
  else
    rm -rf "$venv"
    PY=$sys_py PIP="$sys_py -m pip install --target $site" env_kind="pip --target $site"
    export PYTHONPATH=$site
  fi
  echo "python: $sys_py ($("$sys_py" --version 2>&1)), $env_kind" | tee -a "$summary"
  $PIP -q "${wheels[@]}" -r "$carry/requirements.txt" || return 1
  if [[ $env_kind == pip* ]] || ! $PIP -q "${wheels[@]}" -r "$carry/build-requirements.txt" ||
    ! $PIP -q "${wheels[@]}" --no-deps --no-build-isolation "$repo"; then
    # the app runs from the source tree as well (python -m advisor): record it, carry on
    export PYTHONPATH=$repo${PYTHONPATH:+:$PYTHONPATH}
    echo "the project runs from the source tree (PYTHONPATH), not installed" | tee -a "$summary"
  fi
  # the versions this interpreter imports (site-packages of the venv, or --target's folder)
  "$PY" -c 'import importlib.metadata as m
names = "numpy llama-cpp-python gguf nvidia-ml-py psutil platformdirs llm-hardware-advisor"
found = []
for n in names.split():
    try:
        found.append(f"{n} {m.version(n)}")
    except m.PackageNotFoundError:
        found.append(f"{n} -")
print("packages:", ", ".join(found))' | tee -a "$summary"
}
s=$(now)
install_env >>"$setup_log" 2>&1
env_rc=$?
printf '%-14s %-30s %4ds\n' setup-python "$([ $env_rc = 0 ] && echo ok || echo "FAILED rc=$env_rc")" \
  $(($(now) - s)) | tee -a "$summary"
[ $env_rc = 0 ] || tail -5 "$setup_log"
export PY

# ---------------------------------------------------------------------------------------------
# setup 2: llama.cpp from the carried source: libllama, libggml*, llama-bench
# ---------------------------------------------------------------------------------------------
src_tar=$carry/llama.cpp-src.tar.xz
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_MTMD=OFF -DGGML_CCACHE=OFF)
if [ "$cpu_mode" = 1 ]; then
  build=$work/llama.cpp-cpu
  cmake_args+=(-DGGML_CUDA=OFF)
else
  build=$work/llama.cpp-cuda
  cmake_args+=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90}"
    -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_COMPRESSION_MODE=none)
fi
# Ninja where there is one (the lent machine's image lists CMake and ninja, not make)
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
# the commit the carried source is (no .git travels): llama-bench and ggml_commit() say it
commit=$(cat "$carry/llama-cpp-commit.txt" 2>/dev/null)
[ -n "$commit" ] && cmake_args+=(-DLLAMA_BUILD_COMMIT="$commit")
# shellcheck disable=SC2206
cmake_args+=(${GPU_CHECK_CMAKE_ARGS:-})

# cuBLAS and the driver's libcuda where CMake would not find them: a toolkit assembled from
# NVIDIA's pip wheels keeps cuBLAS in site-packages/nvidia/cu13/lib as libcublas.so.13 only,
# and the driver's libcuda.so.1 in a folder of its own; link them through a shim folder, whose
# links the libraries' run path then finds too (no LD_LIBRARY_PATH: that folder holds other
# CUDA libraries, of other minor versions, that would shadow the toolkit's)
cuda_locate() {
  local root="" c lib="" inc drv="" shim=$work/cuda-shim
  for c in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    [ -n "$c" ] && [ -x "$c/bin/nvcc" ] && root=$c && break
  done
  if [ -z "$root" ]; then # nvcc says where it lives (a wrapper script on the PATH, say)
    root=$(nvcc --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
    root=$(cd "${root:-/nonexistent}" 2>/dev/null && pwd) ||
      root=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
  fi
  cmake_args+=(-DCMAKE_CUDA_COMPILER="$root/bin/nvcc" -DCUDAToolkit_ROOT="$root")
  echo "CUDA toolkit: $root"
  rm -rf "$shim"
  mkdir -p "$shim/lib" "$shim/include"
  for c in "$root"/lib64 "$root"/lib "$root"/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    [ -e "$c/libcublas.so" ] && [ -e "$c/libcublasLt.so" ] && lib=$c/libcublas.so && break
  done
  if [ -n "$lib" ]; then # the toolkit's own (headers beside it): named, not searched for
    cmake_args+=(-DCUDA_cublas_LIBRARY="$lib" -DCUDA_cublasLt_LIBRARY="${lib%/*}/libcublasLt.so")
    echo "cuBLAS: $lib"
  fi
  if [ -z "$lib" ]; then
    lib=$({
      for c in "$root" /usr/local/cuda* /usr/lib/x86_64-linux-gnu; do
        ls "$c"/lib64/libcublas.so.* "$c"/lib/libcublas.so.* "$c"/libcublas.so.* 2>/dev/null
      done
      for c in python3 "$sys_py"; do
        "$c" -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null |
          while read -r d; do ls "$d"/nvidia/*/lib/libcublas.so.* 2>/dev/null; done
      done
      timeout 60 find / -xdev \( -path /proc -o -path /sys \) -prune -o \
        -name 'libcublas.so.*' -print 2>/dev/null
    } | grep -E 'libcublas\.so\.[0-9]+$' | head -1)
    if [ -z "$lib" ]; then
      echo "cuBLAS: not found (CMake will say so)"
    else
      c=$(dirname "$lib")
      for f in "$c"/libcublas.so.* "$c"/libcublasLt.so.*; do ln -sf "$f" "$shim/lib/"; done
      ln -sf "$lib" "$shim/lib/libcublas.so"
      ln -sf "$(ls "$c"/libcublasLt.so.* | head -1)" "$shim/lib/libcublasLt.so"
      for inc in "$c/../include" "$root/include"; do
        [ -f "$inc/cublas_v2.h" ] && break
      done
      for f in "$inc"/cublas*.h; do ln -sf "$(readlink -f "$f")" "$shim/include/"; done
      cmake_args+=(-DCUDA_cublas_LIBRARY="$shim/lib/libcublas.so"
        -DCUDA_cublasLt_LIBRARY="$shim/lib/libcublasLt.so"
        -DCMAKE_CUDA_FLAGS="-I$shim/include" -DCMAKE_CXX_FLAGS="-I$shim/include")
      echo "cuBLAS: $lib (headers $(readlink -f "$inc"), through $shim)"
    fi
  fi
  # the driver library to link (CMake looks in the toolkit and the system folders only)
  for c in "$root"/lib64/stubs "$root"/lib/stubs "$root"/targets/x86_64-linux/lib/stubs \
    /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64; do
    if [ -e "$c/libcuda.so" ]; then
      cmake_args+=(-DCUDA_cuda_driver_LIBRARY="$c/libcuda.so")
      echo "driver: $c/libcuda.so"
      return
    fi
  done
  drv=$({
    ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF}'
    ls /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 2>/dev/null
  } | head -1)
  if [ -n "$drv" ]; then
    ln -sf "$drv" "$shim/lib/libcuda.so"
    cmake_args+=(-DCUDA_cuda_driver_LIBRARY="$shim/lib/libcuda.so")
    echo "driver: $drv (through $shim)"
  else
    cmake_args+=(-DGGML_CUDA_NO_VMM=ON) # links no libcuda; the legacy memory pool
    echo "driver: libcuda not found: built with GGML_CUDA_NO_VMM=ON"
  fi
}

build_llama() {
  local stamp want t
  want="$(sha256sum "$src_tar" | cut -c1-16) ${cmake_args[*]}"
  stamp=$build/gpu-check-stamp
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -e "$build/bin/libllama.so" ] &&
    [ -x "$build/bin/llama-bench" ]; then
    echo "reusing the build in $build"
    return 0
  fi
  rm -rf "$build"
  mkdir -p "$build"
  if command -v xz >/dev/null; then
    tar -xJf "$src_tar" -C "$build" || return 1
  else # no xz program: Python's lzma reads it
    "$sys_py" -c 'import sys, tarfile as t; t.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
      "$src_tar" "$build" || return 1
  fi
  # ggml asks git for its commit and, with no .git, says 'unknown': let the one given stand
  sed -i 's/^if(GIT_EXE)$/if(GIT_EXE AND NOT GGML_BUILD_COMMIT)/' "$build/llama.cpp/ggml/CMakeLists.txt"
  echo "cmake ${cmake_args[*]}"
  t=$(date +%s)
  cmake -S "$build/llama.cpp" -B "$build" "${cmake_args[@]}" || return 1
  echo "configured in $(($(date +%s) - t))s"
  t=$(date +%s)
  # the compiler's output (thousands of warnings) stays in the work folder: errors and the
  # end come back in setup.log
  echo "building llama ggml llama-bench, -j $jobs (output in $build/compile.log)"
  if ! cmake --build "$build" --target llama ggml llama-bench -j "$jobs" >"$build/compile.log" 2>&1; then
    grep -E 'error|Error' "$build/compile.log" | head -40
    tail -20 "$build/compile.log"
    return 1
  fi
  tail -3 "$build/compile.log"
  echo "compiled in $(($(date +%s) - t))s"
  echo "$want" >"$stamp"
}
s=$(now)
if [ "$cpu_mode" != 1 ]; then
  cuda_locate >>"$setup_log" 2>&1
fi
# the build may take what the budget holds but the last 60 s (detection, the summary)
box=$(($(left) - 60))
[ "$box" -gt 1 ] || box=1
export -f build_llama
export cpu_mode build src_tar jobs sys_py
timeout -k 10 "$box" bash -c "$(declare -p cmake_args); build_llama" >>"$setup_log" 2>&1
build_rc=$?
case $build_rc in
  0) status=ok ;; 124 | 137) status="TIMED OUT after ${box}s" ;; *) status="FAILED rc=$build_rc" ;;
esac
printf '%-14s %-30s %4ds\n' build-llama "$status" $(($(now) - s)) | tee -a "$summary"
grep -E '^(CUDA toolkit|cuBLAS|driver|reusing|configured|compiled)' "$setup_log" | sed 's/^/  /' >>"$summary"
[ "$build_rc" = 0 ] || tail -25 "$setup_log"
[ "$build_rc" = 124 ] || [ "$build_rc" = 137 ] && tail -20 "$build/compile.log" >>"$setup_log" 2>/dev/null
export LLAMA_CPP_LIB_PATH=$build/bin
llama_bench=$build/bin/llama-bench
(cd "$LLAMA_CPP_LIB_PATH" 2>/dev/null && echo "  libraries:" lib*.so) | tee -a "$summary"
echo "setup done at $(($(now) - t0))s" | tee -a "$summary"

# ---------------------------------------------------------------------------------------------
# the steps
# ---------------------------------------------------------------------------------------------
export out steps_log llama_bench
# the app's own cache of synthetic models: bench and parity write each file once
models=$ADVISOR_HOME/cache/synthetic
mkdir -p "$models"
export models
tee_err='2> >(tee -a "$steps_log" >&2)'
if [ "$cpu_mode" = 1 ]; then # the same code paths, sized for 2 cores
  bench_d='--synthetic llama-3.2-1b:q4_0 --layers 4 --pp 64 --tg 16 --batch 1,2 --reps 2'
  bench_e='--synthetic qwen3-30b-a3b:q4_0 --layers 2 --cpu-moe 4 --pp 64 --tg 16 --reps 2'
  parity='--rounds 1 --reps 1 --pp 64 --tg 16' # no --gpu-layers: refused without a GPU
else
  bench_d='--synthetic llama-3.2-1b:q4_0 --pp 512 --tg 128 --batch 1,8 --longest-context'
  bench_e='--synthetic qwen3-30b-a3b:q4_0 --layers 6 --cpu-moe 4 --pp 512 --tg 128'
  parity='--gpu-layers 99 --rounds 2 --reps 3'
fi

# a: detection as the app sees it (NVML, llama.cpp's devices through LLAMA_CPP_LIB_PATH)
step detect 90 20 "\"\$PY\" -m advisor detect --json > \"\$out/detect.json\" $tee_err"

# f: full-size files, timed by llama-bench itself (no app code in the figure): one file at a
# time (written, measured, removed: the disk holds 64 GiB); JSON lines with llama.cpp's build
full_n=3
if [ "$cpu_mode" = 1 ]; then
  full_models=${GPU_CHECK_FULL:-qwen2.5-0.5b:q4_0}
  full_args="-p 64 -n 16 -r 1"
else
  full_models=${GPU_CHECK_FULL:-llama-2-7b:q4_0 qwen2.5-14b:q4_k_m qwen2.5-7b:q4_k_m llama-3.1-8b:q8_0}
  full_args="-ngl 99 -p 512 -n 128 -r $full_n"
fi
export full_models full_args work
step full-models 180 40 'for spec in $full_models; do
    f=$work/full-${spec%%:*}-${spec##*:}.gguf
    "$PY" -m advisor synth --shape "${spec%%:*}" --quant "${spec##*:}" --force "$f" >&2 &&
      "$llama_bench" -m "$f" $full_args -o jsonl >> "$out/full-models.jsonl" 2>> "$steps_log"
    rc=$?; rm -f "$f"; [ $rc = 0 ] || echo "full-models: $spec failed rc=$rc" >&2
  done'

# b: parity with llama-bench, all layers on the GPU
step parity-gpu 240 60 "\"\$PY\" benchmarks/parity_llama_bench.py --llama-bench \"\$llama_bench\" \
  $parity --models-dir \"\$models\" 2>&1 | tee \"\$out/parity-gpu.txt\""

# c: parity of a hybrid placement: the experts of the first 3 of 6 layers in RAM on both sides
if [ "$cpu_mode" = 1 ]; then
  log "parity-hybrid  SKIPPED: needs a GPU (the app refuses --cpu-moe without one)"
else
  step parity-hybrid 200 60 "\"\$PY\" benchmarks/parity_llama_bench.py --llama-bench \
    \"\$llama_bench\" --cpu-moe 3 $parity --models-dir \"\$models\" 2>&1 \
    | tee \"\$out/parity-hybrid.txt\""
fi

# d: energy (NVML) and the longest context on the GPU
step bench-gpu 180 40 \
  "\"\$PY\" -m advisor bench $bench_d --json --no-save --quiet > \"\$out/bench-gpu.json\" $tee_err"

# e: the hybrid placement: the notes name the tensors llama.cpp moved to RAM
if [ "$cpu_mode" = 1 ]; then # no GPU: the app must refuse in one sentence, exit 2
  step bench-cpu-moe 120 30 "\"\$PY\" -m advisor bench $bench_e --json --no-save --quiet \
    > \"\$out/bench-cpu-moe.json\" 2> \"\$out/bench-cpu-moe.err\"; rc=\$?; \
    cat \"\$out/bench-cpu-moe.err\" | tee -a \"\$steps_log\"; \
    [ \$rc = 2 ] && grep -q -- '--cpu-moe needs a GPU' \"\$out/bench-cpu-moe.err\"; r=\$?; \
    rm -f \"\$out/bench-cpu-moe.err\"; exit \$r"
  log "  (CPU rehearsal: bench-cpu-moe ok = refused in one sentence, exit 2, as without a GPU)"
else
  step bench-cpu-moe 150 40 \
    "\"\$PY\" -m advisor bench $bench_e --json --no-save --quiet > \"\$out/bench-cpu-moe.json\" $tee_err"
fi

# ---------------------------------------------------------------------------------------------
# summary: the figures that matter from each step's output
# ---------------------------------------------------------------------------------------------
{
  echo
  echo "--- results"
  "${PY:-python3}" - "$out" <<'PY' 2>&1
import json
import sys
from pathlib import Path

out = Path(sys.argv[1])


def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError) as e:
        print(f"{name}: none ({type(e).__name__})")
        return None


if d := load("detect.json"):
    for g in d.get("gpus") or []:
        print("detect gpu:", g.get("name"), g.get("catalogue_id"), g.get("source"),
              g.get("vram_total_bytes"), "bytes,", g.get("bandwidth_bytes_per_s"), "B/s")
    b = d.get("backend") or {}
    print("detect llama.cpp:", b.get("available"), b.get("backends"), "offload",
          b.get("gpu_offload"), b.get("llama_cpp_commit"))
    for dev in b.get("devices") or []:
        print("  device:", dev.get("name"), dev.get("description"), dev.get("type"),
              dev.get("memory_total_bytes"))
for name in ("bench-gpu.json", "bench-cpu-moe.json"):
    if (run := load(name)) is None:
        continue
    llama = run.get("llama") or {}
    print(f"{name}: {run.get('model', {}).get('name') or run.get('config', {}).get('model_path')}"
          f", gpu_layers {llama.get('gpu_layers')}, backends {llama.get('backends')},"
          f" load {run.get('load_time_s')} s")
    for t in run.get("tests", []):
        print(f"  {t['name']:>10} {t['tokens_per_s']:10.1f} t/s  {t.get('energy_method') or '-'}"
              f" {t.get('energy_source') or ''} {t.get('average_w')} W"
              f" {t.get('joules_per_token')} J/token")
    if "longest_context_tokens" in run and run.get("longest_context_tokens") is not None:
        print("  longest context", run.get("longest_context_tokens"), "predicted",
              run.get("predicted_longest_context_tokens"))
    for note in run.get("notes", []):
        print("  note:", note[:400])
full = out / "full-models.jsonl"
if full.exists():
    print("full-models.jsonl (llama-bench):")
    for line in full.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        test = f"pp{r['n_prompt']}" if r.get("n_prompt") else f"tg{r.get('n_gen')}"
        print(f"  {Path(r.get('model_filename', '?')).name:34s} {test:6s} "
              f"{r.get('avg_ts', 0):9.1f} +- {r.get('stddev_ts', 0):6.1f} t/s  "
              f"fa {r.get('flash_attn')} build {r.get('build_commit')} ({r.get('build_number')})")
for name in ("parity-gpu.txt", "parity-hybrid.txt"):
    p = out / name
    if p.exists():
        lines = p.read_text().splitlines()
        rows = [ln for ln in lines if " pp" in ln or " tg" in ln or "deviation" in ln]
        print(f"{name}:", *(rows or lines[-5:]), sep="\n  ")
PY
  echo
  echo "total $(($(now) - t0))s of a ${budget}s budget"
} | tee -a "$summary"
{ echo; echo "=== setup.log"; cat "$setup_log"; } >>"$steps_log" && rm -f "$setup_log"
ls "$out" | paste -sd' ' | sed 's/^/files: /'
