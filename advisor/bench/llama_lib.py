"""Thin helpers over llama-cpp-python's low-level ctypes API (llama.cpp's C API).

Only the child process imports this module: llama.cpp can crash, hang or eat all memory, and
the app must survive all three. Nothing here does per-token work; the measuring loop in
`runner.py` calls llama.cpp directly.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp
from llama_cpp import llama_cpp as C

from advisor.core.hardware.model import BACKEND_NAMES, BackendInfo, LlamaDevice

GGML_MAX_N_THREADS = 512
KV_CACHE_TYPES = {
    "f32": 0,
    "f16": C.GGML_TYPE_F16,
    "q4_0": C.GGML_TYPE_Q4_0,
    "q4_1": 3,
    "q5_0": 6,
    "q5_1": 7,
    "q8_0": C.GGML_TYPE_Q8_0,
    "bf16": 30,
}
FLASH_ATTN = {
    "auto": C.LLAMA_FLASH_ATTN_TYPE_AUTO,
    "on": C.LLAMA_FLASH_ATTN_TYPE_ENABLED,
    "off": C.LLAMA_FLASH_ATTN_TYPE_DISABLED,
}
DEVICE_TYPES = {0: "CPU", 1: "GPU", 2: "iGPU", 3: "accelerator", 4: "meta"}

_LOG_LINES: list[str] = []
# llama.cpp's own report of each tensor a buffer override moved (a DEBUG line per tensor:
# "tensor blk.0.ffn_up_exps.weight (... MiB q4_0) buffer type overridden to CPU"), kept apart
# from the bounded log, whose 200 lines a large model's load would push them out of
_OVERRIDE_LINES: list[str] = []
OVERRIDE_MARK = "buffer type overridden to"
_LOG_CALLBACK = None  # keep the ctypes callback alive for the life of the process
_initialised = False


def _lib_dir() -> Path:
    """The folder llama-cpp-python loaded libllama from, so that ggml is read from the same
    build: its LLAMA_CPP_LIB_PATH where set (a llama.cpp built apart, as
    benchmarks/gpu_check.sh does), else the lib folder beside the package."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")  # read as llama_cpp/llama_cpp.py reads it
    if override is not None:
        return Path(override)
    return Path(llama_cpp.__file__).resolve().parent / "lib"


def _load(name: str) -> ctypes.CDLL | None:
    """Load one of the shared libraries shipped beside llama_cpp, None if absent."""
    lib_dir = _lib_dir()
    candidates = {
        "linux": [f"lib{name}.so"],
        "darwin": [f"lib{name}.dylib"],
        "win32": [f"{name}.dll", f"lib{name}.dll"],
    }.get(sys.platform, [f"lib{name}.so"])
    for candidate in candidates:
        path = lib_dir / candidate
        if path.exists():
            try:
                return ctypes.CDLL(str(path))
            except OSError:
                return None
    return None


def init_backend(keep_log_lines: int = 200) -> None:
    """Initialise llama.cpp once; route its log into a bounded buffer (for error details)."""
    global _LOG_CALLBACK, _initialised
    if _initialised:
        return

    @C.llama_log_callback
    def _log(level: int, text: bytes, user_data: Any) -> None:
        if text:
            line = text.decode("utf-8", errors="replace")
            _LOG_LINES.append(line)
            if OVERRIDE_MARK in line:
                _OVERRIDE_LINES.append(line.strip())
            if len(_LOG_LINES) > keep_log_lines:
                del _LOG_LINES[: len(_LOG_LINES) - keep_log_lines]

    _LOG_CALLBACK = _log
    C.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p())
    C.llama_backend_init()
    _initialised = True


def recent_log(n: int = 30) -> str:
    """The last lines llama.cpp logged: the details behind a failure."""
    return "".join(_LOG_LINES[-n:]).strip()


def take_override_lines() -> list[str]:
    """llama.cpp's 'buffer type overridden' lines logged since the last call (one per tensor
    an override moved), and forget them."""
    lines = list(_OVERRIDE_LINES)
    _OVERRIDE_LINES.clear()
    return lines


# -------------------------------------------------------------------------------------------
# tensor buffer overrides: llama_model_params.tensor_buft_overrides (llama-bench's -ot, -ncmoe)
# -------------------------------------------------------------------------------------------


class TensorBuftOverride(ctypes.Structure):
    """struct llama_model_tensor_buft_override { const char * pattern; ggml_backend_buffer_type_t
    buft; } (llama.h); llama-cpp-python declares the field but not the struct."""

    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


GGML_BACKEND_DEVICE_TYPE_CPU = 0


def cpu_buffer_type() -> int | None:
    """ggml's CPU buffer type (ggml_backend_cpu_buffer_type(), what llama.cpp's -ncmoe and -ot
    =CPU use), or the CPU device's buffer type; None where the build exports neither."""
    base = _load("ggml-base")
    if base is not None and hasattr(base, "ggml_backend_cpu_buffer_type"):
        base.ggml_backend_cpu_buffer_type.restype = ctypes.c_void_p
        base.ggml_backend_cpu_buffer_type.argtypes = []
        return base.ggml_backend_cpu_buffer_type() or None
    ggml = _load("ggml")
    if (
        base is None
        or ggml is None
        or not hasattr(ggml, "ggml_backend_dev_by_type")
        or not hasattr(base, "ggml_backend_dev_buffer_type")
    ):
        return None
    ggml.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    ggml.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    base.ggml_backend_dev_buffer_type.restype = ctypes.c_void_p
    base.ggml_backend_dev_buffer_type.argtypes = [ctypes.c_void_p]
    dev = ggml.ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU)
    return (base.ggml_backend_dev_buffer_type(dev) or None) if dev else None


def buffer_overrides(patterns: list[str], buft: int) -> ctypes.Array[TensorBuftOverride]:
    """The NULL-terminated override array llama.cpp reads while it loads: each pattern (a
    regular expression on tensor names) to `buft`. The array holds its pattern strings (ctypes
    keeps what is assigned to a c_char_p field alive with it): keep the array until the
    model is freed."""
    array = (TensorBuftOverride * (len(patterns) + 1))()
    for i, pattern in enumerate(patterns):
        array[i].pattern = pattern.encode("utf-8")
        array[i].buft = buft
    array[len(patterns)].pattern = None  # the terminator
    array[len(patterns)].buft = None
    return array


# -------------------------------------------------------------------------------------------
# what the installed llama.cpp was built with
# -------------------------------------------------------------------------------------------

_BACKEND_NAMES = {
    **BACKEND_NAMES,
    "cpu": "CPU",
    "mtl": "Metal",
    "hip": "ROCm",
    "blas": "BLAS",
    "rpc": "RPC",
    "opencl": "OpenCL",
    "cann": "CANN",
    "musa": "MUSA",
}


def backend_info() -> BackendInfo:
    """Backends and devices as llama.cpp itself reports them (registries and devices)."""
    init_backend()
    backends: list[str] = []
    devices: list[LlamaDevice] = []
    ggml = _load("ggml")
    if ggml is not None:
        ggml.ggml_backend_reg_count.restype = ctypes.c_size_t
        ggml.ggml_backend_reg_get.restype = ctypes.c_void_p
        ggml.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
        ggml.ggml_backend_reg_name.restype = ctypes.c_char_p
        ggml.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
        for i in range(ggml.ggml_backend_reg_count()):
            raw = ggml.ggml_backend_reg_name(ggml.ggml_backend_reg_get(i)) or b"?"
            name = raw.decode(errors="replace")
            backends.append(_BACKEND_NAMES.get(name.lower(), name))
        ggml.ggml_backend_dev_count.restype = ctypes.c_size_t
        ggml.ggml_backend_dev_get.restype = ctypes.c_void_p
        ggml.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        for fn in ("ggml_backend_dev_name", "ggml_backend_dev_description"):
            getattr(ggml, fn).restype = ctypes.c_char_p
            getattr(ggml, fn).argtypes = [ctypes.c_void_p]
        ggml.ggml_backend_dev_type.restype = ctypes.c_int
        ggml.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        ggml.ggml_backend_dev_memory.restype = None
        ggml.ggml_backend_dev_memory.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.POINTER(ctypes.c_size_t),
        ]
        for i in range(ggml.ggml_backend_dev_count()):
            dev = ggml.ggml_backend_dev_get(i)
            free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
            ggml.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
            devices.append(
                LlamaDevice(
                    name=(ggml.ggml_backend_dev_name(dev) or b"").decode(errors="replace"),
                    description=(ggml.ggml_backend_dev_description(dev) or b"").decode(
                        errors="replace"
                    ),
                    type=DEVICE_TYPES.get(ggml.ggml_backend_dev_type(dev), "unknown"),
                    memory_free_bytes=int(free.value),
                    memory_total_bytes=int(total.value),
                )
            )
    system_info = C.llama_print_system_info().decode(errors="replace").strip()
    if not backends:  # very old builds: read the system-info line instead
        backends = ["CPU"] + [
            b for b in ("Metal", "CUDA", "Vulkan", "ROCm") if b.upper() in system_info.upper()
        ]
    return BackendInfo(
        available=True,
        backends=tuple(dict.fromkeys(backends)),
        gpu_offload=bool(C.llama_supports_gpu_offload()),
        devices=tuple(devices),
        system_info=system_info,
        llama_cpp_python_version=llama_cpp.__version__,
        llama_cpp_commit=vendored_llama_cpp_commit(),
    )


def vendored_llama_cpp_commit() -> str | None:
    """The llama.cpp commit the bundled libraries were built from, as ggml reports it
    (ggml_commit(), e.g. '0c1e570'; '-dirty' marks llama-cpp-python's build patches), with
    ggml's version; None for a build too old to say."""
    lib = _load("ggml-base") or _load("ggml")
    if lib is None or not hasattr(lib, "ggml_commit"):
        return None
    lib.ggml_commit.restype = ctypes.c_char_p
    commit = (lib.ggml_commit() or b"").decode(errors="replace")
    if hasattr(lib, "ggml_version"):
        lib.ggml_version.restype = ctypes.c_char_p
        version = (lib.ggml_version() or b"").decode(errors="replace")
        return f"{commit} (ggml {version})" if version else commit or None
    return commit or None


# -------------------------------------------------------------------------------------------
# threads: a ggml threadpool attached to the context, as llama-bench does
# -------------------------------------------------------------------------------------------


class ThreadpoolParams(ctypes.Structure):
    _fields_ = [
        ("cpumask", ctypes.c_bool * GGML_MAX_N_THREADS),
        ("n_threads", ctypes.c_int),
        ("prio", ctypes.c_int),
        ("poll", ctypes.c_uint32),
        ("strict_cpu", ctypes.c_bool),
        ("paused", ctypes.c_bool),
    ]


@dataclass
class Threadpool:
    handle: int
    lib: ctypes.CDLL

    def free(self) -> None:
        if self.handle:
            self.lib.ggml_threadpool_free(ctypes.c_void_p(self.handle))
            self.handle = 0


def new_threadpool(n_threads: int) -> Threadpool | None:
    """A ggml threadpool with llama-bench's defaults (poll 50, normal priority), or None if
    this build does not export it (then llama.cpp makes its own)."""
    lib = _load("ggml-cpu")
    if lib is None or not hasattr(lib, "ggml_threadpool_new"):
        return None
    lib.ggml_threadpool_params_default.restype = ThreadpoolParams
    lib.ggml_threadpool_params_default.argtypes = [ctypes.c_int]
    lib.ggml_threadpool_new.restype = ctypes.c_void_p
    lib.ggml_threadpool_new.argtypes = [ctypes.POINTER(ThreadpoolParams)]
    lib.ggml_threadpool_free.restype = None
    lib.ggml_threadpool_free.argtypes = [ctypes.c_void_p]
    params = lib.ggml_threadpool_params_default(n_threads)
    params.poll = 50
    handle = lib.ggml_threadpool_new(ctypes.byref(params))
    return Threadpool(handle, lib) if handle else None


_llama = _load("llama")
if _llama is not None and hasattr(_llama, "llama_attach_threadpool"):
    _llama.llama_attach_threadpool.restype = None
    _llama.llama_attach_threadpool.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def attach_threadpool(ctx: Any, pool: Threadpool | None) -> bool:
    if pool is None or _llama is None or not hasattr(_llama, "llama_attach_threadpool"):
        return False
    ctx_ptr = ctypes.cast(ctx, ctypes.c_void_p)
    _llama.llama_attach_threadpool(ctx_ptr, ctypes.c_void_p(pool.handle), None)
    return True


def lib_versions() -> dict[str, str]:
    return {"llama_cpp_python": llama_cpp.__version__, "pid": str(os.getpid())}
