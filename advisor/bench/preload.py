"""llama.cpp's libraries load before numpy's in the benchmark child.

A llama.cpp built with the C++ runtime linked into its own libraries (no libstdc++.so.6 among
their needs, as the CUDA build on the lent H200 was, 2026-12-04) crashed in its first formatted
log line (`llama_model::print_info`, SIGSEGV) whenever numpy, which loads the system's C++
runtime, was imported first; loaded first, it ran. The child imports llama_cpp before anything
that imports numpy (gguf does).
"""

from __future__ import annotations

import sys


def llama_before_numpy() -> None:
    """Import llama_cpp now, if numpy is not loaded yet (after, it no longer helps). A missing
    or broken llama-cpp-python is left for the child to report in a sentence, later."""
    if "numpy" in sys.modules or "llama_cpp" in sys.modules:
        return
    try:
        import llama_cpp  # noqa: F401
    except Exception:  # reported where the child uses it, in a sentence
        return
