"""The parity pooling script reads every round of every saved run, with or without the
interval column, and its interval is the t-interval of the log ratios."""

from __future__ import annotations

import math

import pytest

from tests.conftest import load_script


def _pool():
    return load_script("benchmarks/parity_pool.py")


OLD = """threads 2, pp512, tg128, 3 repetitions, 2 alternating rounds

model                                        size   test  llama-bench    advisor   ratio  per round
a-v1.gguf                 1316 MB  pp512        51.23      50.65   0.989  0.900 1.100
a-v1.gguf                 1316 MB  tg128        15.35      15.53   1.012  1.000 1.000
"""
NEW = """model  size  test  llama-bench  advisor  ratio  95% interval  per round
a-v1.gguf                 1316 MB  pp512        51.23      50.65   0.989  0.900-1.100  1.000 1.000
largest deviation of the median ratio from 1: 1.2%
"""


def test_every_round_of_every_file_is_read(tmp_path):
    pool = _pool()
    (tmp_path / "old.txt").write_text(OLD)
    (tmp_path / "new.txt").write_text(NEW)
    rounds = pool.read_rounds([str(tmp_path / "old.txt"), str(tmp_path / "new.txt")])
    assert rounds == {
        ("a-v1.gguf", "pp512"): [0.9, 1.1, 1.0, 1.0],
        ("a-v1.gguf", "tg128"): [1.0, 1.0],
    }


def test_summary_is_the_t_interval_of_the_log_ratios():
    pool = _pool()
    geo, median, lo, hi = pool.summary([0.9, 1.1, 1.0, 1.0])
    logs = [math.log(x) for x in (0.9, 1.1, 1.0, 1.0)]
    mean = sum(logs) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 3)
    assert geo == pytest.approx(math.exp(mean))
    assert median == pytest.approx(1.0)
    # t(0.975, 3) = 3.182
    assert lo == pytest.approx(math.exp(mean - 3.182 * sd / 2), rel=1e-3)
    assert hi == pytest.approx(math.exp(mean + 3.182 * sd / 2), rel=1e-3)


def test_no_rows_is_exit_2(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("nothing here\n")
    assert _pool().main([str(tmp_path / "x.txt")]) == 2
    assert "no parity rows" in capsys.readouterr().out
