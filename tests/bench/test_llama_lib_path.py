"""LLAMA_CPP_LIB_PATH, llama-cpp-python's switch to a llama.cpp built apart (the GPU check
builds one with CUDA): the app reads ggml's backends, devices and commit from that folder too,
the very libraries libllama was loaded with, not the ones beside the package."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.llama
def test_ggml_is_read_from_the_folder_llama_cpp_python_loaded_libllama_from(tmp_path):
    spec = importlib.util.find_spec("llama_cpp")  # found, not imported: the parent stays clean
    assert spec is not None and spec.origin is not None
    shipped = Path(spec.origin).parent / "lib"
    apart = tmp_path / "apart"
    apart.mkdir()
    for lib in shipped.iterdir():
        (apart / lib.name).symlink_to(lib)
    code = (
        "from advisor.bench import llama_lib as L\n"
        "print(L._lib_dir())\n"
        "print(L.vendored_llama_cpp_commit())\n"
        "print(L.backend_info().backends)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LLAMA_CPP_LIB_PATH": str(apart)},
    )
    assert out.returncode == 0, out.stderr
    folder, commit, backends = out.stdout.splitlines()[-3:]
    assert folder == str(apart)
    assert commit != "None" and "CPU" in backends
