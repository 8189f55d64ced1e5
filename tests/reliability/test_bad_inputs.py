"""Every bad input gets one plain sentence and a non-zero exit (CLI) or a message (GUI), never a
traceback: given to `advisor inspect`, `advisor bench` and the GUI's open action."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.bench.synth import write_synthetic_gguf
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.gguf_file import InvalidModelError
from advisor.core.model.shapes import get_shape
from tests.conftest import advisor_cli, write_sparse

_cli = advisor_cli


def _one_sentence(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, make_synth) -> dict[str, tuple[Path, str]]:
    """name -> (path, words the message must contain)."""
    d = tmp_path_factory.mktemp("bad")
    good = make_synth("qwen2.5-0.5b", "q4_0", 2)
    from advisor.core.model.gguf_file import read_gguf_header

    header = read_gguf_header(good)
    size = good.stat().st_size
    with good.open("rb") as f:
        data = f.read(header.data_offset)  # the header only; each file below is cut or
        # patched there, the tensor data left as a sparse run of zeros of the right length
    write = write_sparse

    files: dict[str, tuple[Path, str]] = {}

    files["missing"] = (d / "nowhere.gguf", "There is no file")
    (d / "a-folder.gguf").mkdir()
    files["directory"] = (d / "a-folder.gguf", "is a folder")
    (d / "empty.gguf").write_bytes(b"")
    files["empty"] = (d / "empty.gguf", "is empty")
    (d / "text.gguf").write_text("<html>Rate limit exceeded</html>\n")
    files["text"] = (d / "text.gguf", "not a GGUF model")
    write(d / "truncated.gguf", data, size // 2)
    files["truncated"] = (d / "truncated.gguf", "truncated")
    (d / "header-cut.gguf").write_bytes(data[:300])
    files["header cut"] = (d / "header-cut.gguf", "truncated")

    # a header whose tensors claim more bytes than the file has: grow one tensor's shape
    big = bytearray(data)
    largest = max((t for t in header.tensors if len(t.shape) == 2), key=lambda t: t.n_bytes)
    name = largest.name.encode()
    at = bytes(big).index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
    n_dims = struct.unpack_from("<I", big, at)[0]
    dims = struct.unpack_from(f"<{n_dims}Q", big, at + 4)
    struct.pack_into(f"<{n_dims}Q", big, at + 4, dims[0], *(x * 64 for x in dims[1:]))
    write(d / "claims-more.gguf", bytes(big), size)
    files["claims more"] = (d / "claims-more.gguf", "need")

    arch = bytearray(data)
    i = bytes(arch).index(b"qwen2", bytes(arch).index(b"general.architecture"))
    arch[i : i + 5] = b"zzzz9"
    write(d / "alien-arch.gguf", bytes(arch), size)
    files["unsupported architecture"] = (d / "alien-arch.gguf", "not support")

    parts = _write_split_model(d / "split-model.gguf")
    assert len(parts) == 3
    files["split part 2"] = (parts[1], "part 2 of 3")
    return files


def _write_split_model(path: Path) -> list[Path]:
    """A real split model (split.no / split.count metadata), as gguf-split writes one."""
    from dataclasses import replace

    import gguf
    import numpy as np

    from advisor.bench.synth import _add_metadata
    from advisor.core.model.facts import typed_layout
    from advisor.core.model.quant import file_type

    # a real split needs only the split metadata and tensors spread over parts: a 1,024-token
    # vocabulary keeps the zero-filled file at a few MB instead of 300
    shape = replace(get_shape("qwen2.5-0.5b").with_layers(2), vocab_size=1024)
    layout = typed_layout(shape, "f16")
    writer = gguf.GGUFWriter(path, shape.architecture, split_max_tensors=len(layout) // 3 + 1)
    _add_metadata(writer, shape, file_type("f16"))
    for name, dims, ggml_type in layout:
        dtype = np.float32 if ggml_type == 0 else np.float16
        writer.add_tensor(name, np.zeros(tuple(reversed(dims)), dtype=dtype))
    writer.write_header_to_file(path)
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return sorted(path.parent.glob("split-model-*-of-*.gguf"))


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "directory",
        "empty",
        "text",
        "truncated",
        "header cut",
        "claims more",
        "unsupported architecture",
        "split part 2",
    ],
)
def test_inspect_and_bench_refuse_with_one_sentence(bad_files, case, tmp_path):
    path, words = bad_files[case]
    for command in (["inspect", str(path)], ["bench", str(path), "--reps", "1"]):
        out = _cli(*command, home=tmp_path)
        assert out.returncode == 2, (command, out.stdout, out.stderr)
        line = _one_sentence(out.stderr)
        assert words in line, line
        assert line.startswith("advisor: ")


@pytest.mark.llama
def test_path_with_spaces_and_non_ascii_works(make_synth, tmp_path):
    src = make_synth("qwen2.5-0.5b", "q4_0", 2)
    odd = tmp_path / "mes modèles" / "Qwen 0.5B – ünïcode ✓.gguf"
    odd.parent.mkdir()
    shutil.copy(src, odd)
    out = _cli("inspect", str(odd), "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    out = _cli("bench", str(odd), "--pp", "16", "--tg", "4", "--reps", "1", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr


def test_unreadable_file(make_synth, tmp_path):
    src = make_synth("qwen2.5-0.5b", "q4_0", 2)
    locked = tmp_path / "locked.gguf"
    shutil.copy(src, locked)
    locked.chmod(0)
    if os.access(locked, os.R_OK):
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or not setpriv:
            pytest.skip("running as a user who can read any file")
        tmp_path.chmod(0o755)
        env = {**os.environ, "ADVISOR_HOME": "/tmp/advisor-nobody"}
        out = subprocess.run(
            [
                setpriv,
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                sys.executable,
                "-m",
                "advisor",
                "inspect",
                str(locked),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    else:
        out = _cli("inspect", str(locked), home=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "cannot be read (permission denied)" in _one_sentence(out.stderr)


@pytest.mark.llama
@pytest.mark.slow
def test_model_too_large_for_this_machine(tmp_path):
    path = tmp_path / "llama-3-70b.gguf"
    write_synthetic_gguf(path, "llama-3-70b", "q4_k_m", sparse=True)
    facts = facts_from_gguf(path)
    import psutil

    if facts.weights_bytes < psutil.virtual_memory().available:
        pytest.skip("this machine could hold a 70B model")
    out = _cli("bench", str(path), "--reps", "1", home=tmp_path)
    assert out.returncode == 2
    line = _one_sentence(out.stderr)
    assert "needs about" in line and "GiB" in line and "free" in line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["project", "--shape", "llama-3-8b", "--to", "RTX 9999"], "Unknown device 'RTX 9999'"),
        (["project", "--shape", "llama-3-8", "--to", "RTX 4090"], "Did you mean llama-3-8b"),
        (["bench", "--synthetic", "gemma-9:q4_0"], "Unknown model shape"),
        (["bench", "--synthetic", "llama-3-8b:q4_z"], "Unknown quantisation"),
        (["devices", "--search", "zzqq"], "No catalogued device matches"),
        (["bench", "--synthetic", "llama-3-8b", "--pp", "abc"], "whole number"),
        (["project", "--shape", "llama-3-8b", "--workload", "chatty"], "Unknown workload"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_unknown_names_are_one_line_with_suggestions(args, words, tmp_path):
    out = _cli(*args, home=tmp_path)
    assert out.returncode == 2
    assert words in _one_sentence(out.stderr)


def test_gui_open_action_shows_each_error(bad_files, qtbot, make_window):
    window, _ = make_window()
    for case, (path, words) in bad_files.items():
        window.banner.hide()
        window.model.open_path(str(path))
        qtbot.waitUntil(window.banner.isVisible, timeout=5000)
        text = window.banner.message.text()
        assert words in text, (case, text)
        assert "Traceback" not in text
    assert window.isVisible()


def test_every_bad_file_is_an_invalid_model_error(bad_files):
    before = get_shape("qwen2.5-0.5b")
    for _case, (path, words) in bad_files.items():
        with pytest.raises(InvalidModelError, match=words):
            facts_from_gguf(path)
    after = get_shape("qwen2.5-0.5b")  # the built-in shapes are untouched by bad files
    assert after == before and after.n_layers == 24 and after.n_kv_heads == 2
