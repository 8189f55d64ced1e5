# PyInstaller hook for llama-cpp-python (there is no upstream hook).
#
# llama_cpp loads libllama / libggml* with ctypes from the `lib` folder beside its own
# __init__.py; without them the frozen app fails with "Shared library with base name 'llama'
# not found". Keep them in llama_cpp/lib so that lookup (and their $ORIGIN / @loader_path
# references to one another) still works.
from PyInstaller.utils.hooks import collect_dynamic_libs, collect_submodules

binaries = [(src, "llama_cpp/lib") for src, _ in collect_dynamic_libs("llama_cpp")]
hiddenimports = [
    m
    for m in collect_submodules("llama_cpp")
    if not m.startswith(("llama_cpp.server", "llama_cpp.llava", "llama_cpp.mtmd"))
]
excludedimports = ["llama_cpp.server"]
