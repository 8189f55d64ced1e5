"""The benchmark child loads llama.cpp's libraries before numpy's (advisor/bench/preload.py):
a llama.cpp with its own copy of the C++ runtime crashed at its first log line on the lent
H200 whenever numpy had loaded the system's first."""

from __future__ import annotations

import subprocess
import sys

import pytest

# sys.modules in the order modules finished importing: llama_cpp.llama_cpp loads libllama
ORDER = (
    "mods = list(sys.modules); lib = 'llama_cpp.llama_cpp'; "
    "print(mods.index(lib) < mods.index('numpy') if lib in mods else None)"
)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.llama
def test_the_child_module_imports_llama_cpp_before_numpy():
    # what `python -m advisor.bench run` imports before the child's main runs
    assert _run(f"import sys, advisor.bench.__main__; {ORDER}") == "True"


@pytest.mark.llama
def test_the_frozen_apps_child_imports_llama_cpp_before_numpy():
    code = (
        "import sys; from advisor.entry import main; "
        "sys.stdout = sys.__stderr__; main(['--bench-child', 'no-such-command']); "
        f"sys.stdout = sys.__stdout__; {ORDER}"
    )
    assert _run(code) == "True"


def test_nothing_is_preloaded_once_numpy_is_in():
    code = (
        "import sys, numpy; from advisor.bench.preload import llama_before_numpy; "
        "llama_before_numpy(); print('llama_cpp.llama_cpp' in sys.modules)"
    )
    assert _run(code) == "False"
