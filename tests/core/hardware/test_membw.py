"""The RAM bandwidth probe: sane numbers, honest byte counts, and a short run.

No pass/fail on speed beyond plausibility: this only checks that the figures are positive,
inside what any machine can do, and that the probe respects its time budget.
"""

from __future__ import annotations

from advisor.core.hardware.membw import measure_memory_bandwidth

MiB = 1024**2


def test_probe_is_plausible_and_short():
    # the default-size probe's duration is checked by the detection test on this machine
    result = measure_memory_bandwidth(target_s=0.2, size_bytes=128 * MiB)
    assert 1e8 < result.read_bytes_per_s < 5e12  # 0.1 GB/s .. 5 TB/s
    assert 1e8 < result.copy_bytes_per_s < 5e12
    assert 0 < result.duration_s < 3.0
    assert result.threads >= 1
    assert result.size_bytes == 128 * MiB


def test_small_probe_reports_the_buffer_it_read():
    result = measure_memory_bandwidth(target_s=0.05, size_bytes=64 * MiB, threads=2)
    assert result.size_bytes == 64 * MiB
    assert result.threads in (1, 2)
    assert result.read_bytes_per_s > 0 and result.copy_bytes_per_s > 0
    assert result.duration_s < 3.0


def test_a_busy_machine_measures_the_part_faulted_in_by_the_deadline():
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from advisor.core.hardware import membw

    buffer = np.empty(256 * MiB // 8)
    with ThreadPoolExecutor(2) as pool:
        # the deadline already past: one round (2 threads x 32 MiB) is in, past the minimum
        touched = membw._touch(buffer, pool, 2, deadline=0.0)
        assert touched * 8 == 2 * membw._TOUCH_ROUND_BYTES >= membw._MIN_SIZE_BYTES
        assert (buffer[:touched] == 1.0).all()
        # time to spare: every page
        assert membw._touch(buffer, pool, 2, deadline=float("inf")) == len(buffer)
