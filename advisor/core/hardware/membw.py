"""A short STREAM-like probe of the RAM bandwidth a program actually gets on this machine.

Decode reads every weight once per token, so the read stream is the headline figure; a copy
is measured too. Bytes are counted honestly: a read of N bytes moves N, a copy of N bytes
moves 2N (read + write; the write-allocate traffic a CPU may add is not counted, as STREAM
does not). numpy releases the GIL in large reductions and copies, so a thread pool over
chunks drives several cores at once. Best of a few repeats, all within a time budget.

The read kernel is a max-reduction: numpy vectorises it without the pairwise-summation
bookkeeping that makes np.sum compute-bound on one core (10 vs 16 GB/s measured on a Xeon).
One array serves both tests (the copy moves its first half onto its second half), so only
one buffer is faulted in: on a VM, touching fresh pages costs more than the measurement.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

MiB = 1024**2
# Past the biggest common last-level caches (a 2-core cloud VM here reports 260 MiB of L3).
DEFAULT_SIZE_BYTES = 512 * MiB
_MIN_SIZE_BYTES = 32 * MiB
_MAX_THREADS = 32
_HARD_LIMIT_S = 2.5  # the whole probe stays under 3 s even where page faults are slow
_TOUCH_LIMIT_S = 1.2  # faulting the buffer in past this: measure the part already in
_TOUCH_ROUND_BYTES = 32 * MiB


@dataclass(frozen=True)
class MemoryBandwidthResult:
    """Measured RAM bandwidth in bytes/s (best repeat) and how it was measured."""

    read_bytes_per_s: float
    copy_bytes_per_s: float
    duration_s: float  # the whole probe, allocation included
    threads: int  # threads of the best read
    size_bytes: int  # bytes read per read pass; a copy pass reads half and writes half


def default_threads() -> int:
    """Physical cores (one stream per core saturates memory), capped; at least 1."""
    try:
        import psutil

        cores = psutil.cpu_count(logical=False)
    except Exception:
        cores = None
    return max(1, min(cores or os.cpu_count() or 1, _MAX_THREADS))


def default_size_bytes() -> int:
    """A few hundred MB (far beyond any cache), less on a machine short of free RAM."""
    try:
        import psutil

        available = psutil.virtual_memory().available
    except Exception:
        return DEFAULT_SIZE_BYTES
    # The buffer must stay well inside free memory.
    return max(_MIN_SIZE_BYTES, min(DEFAULT_SIZE_BYTES, available // 16))


def _chunks(n_items: int, parts: int) -> list[slice]:
    step = -(-n_items // parts)
    step = -(-step // 512) * 512  # multiples of 4 KiB of float64: no chunk shares a page
    return [slice(i, min(i + step, n_items)) for i in range(0, n_items, step)]


def _touch(buffer: np.ndarray, pool: ThreadPoolExecutor, threads: int, deadline: float) -> int:
    """Fault the buffer's pages in, a round of _TOUCH_ROUND_BYTES per thread at a time, until
    all are in or the deadline passes with at least _MIN_SIZE_BYTES in; the items touched (a
    multiple of 1024: two page-aligned halves)."""
    n_items = len(buffer)
    step = threads * _TOUCH_ROUND_BYTES // 8
    done = 0
    while done < n_items:
        end = min(done + step, n_items)
        parts = [slice(done + p.start, done + p.stop) for p in _chunks(end - done, threads)]
        list(pool.map(lambda part: buffer[part].fill(1.0), parts))
        done = end
        if time.perf_counter() >= deadline and done * 8 >= _MIN_SIZE_BYTES:
            break
    return done - done % 1024


def measure_memory_bandwidth(
    target_s: float = 1.0,
    size_bytes: int | None = None,
    threads: int | None = None,
) -> MemoryBandwidthResult:
    """Measure read and copy bandwidth for about target_s seconds (plus touching the buffer).

    Both one thread and `threads` threads are tried (a single core may already saturate a
    laptop's memory, and thread hand-off costs show on small machines); the best repeat of
    each kind is reported.
    """
    start = time.perf_counter()
    n_items = max(int(size_bytes or default_size_bytes()) // 8, 4096)
    n_items -= n_items % 1024  # two page-aligned halves for the copy
    n_threads = max(1, threads or default_threads())

    buffer = np.empty(n_items, dtype=np.float64)
    configs = [1] if n_threads == 1 else [n_threads, 1]
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        # Touch every page now (in parallel: page faults are slow on VMs) so none is timed; on
        # a machine so busy that faulting pages in outlasts _TOUCH_LIMIT_S, the part touched
        # by then is measured (still past most caches).
        n_items = _touch(buffer, pool, n_threads, start + _TOUCH_LIMIT_S)
        buffer = buffer[:n_items]
        size, half = n_items * 8, n_items // 2
        source, target = buffer[:half], buffer[half:]
        read_parts = {t: _chunks(n_items, t) for t in configs}
        copy_parts = {t: _chunks(half, t) for t in configs}
        best_read = {t: 0.0 for t in configs}
        best_copy = {t: 0.0 for t in configs}

        def read(part: slice) -> float:
            return float(buffer[part].max())

        def copy(part: slice) -> None:
            np.copyto(target[part], source[part])

        budget_end = time.perf_counter() + target_s
        hard_end = start + max(_HARD_LIMIT_S, target_s)
        repeat = 0
        while True:
            for t in configs:
                t0 = time.perf_counter()
                if t == 1:
                    read(read_parts[1][0])
                else:
                    list(pool.map(read, read_parts[t]))
                t1 = time.perf_counter()
                if t == 1:
                    copy(copy_parts[1][0])
                else:
                    list(pool.map(copy, copy_parts[t]))
                t2 = time.perf_counter()
                best_read[t] = max(best_read[t], size / max(t1 - t0, 1e-9))
                # a copy of half the buffer reads half and writes half: `size` bytes moved
                best_copy[t] = max(best_copy[t], size / max(t2 - t1, 1e-9))
                if t2 >= hard_end and best_read[configs[0]]:
                    break  # a busy machine: what each kind measured so far must do
            repeat += 1
            now = time.perf_counter()
            # At least 3 repeats of each kind; stop at the budget or when plainly enough. On a
            # machine so slow that touching the buffer ate the time, one repeat must do.
            if repeat >= 3 and (now >= budget_end or repeat >= 50):
                break
            if now >= hard_end:
                break

    best_threads = max(configs, key=lambda t: best_read[t])
    return MemoryBandwidthResult(
        read_bytes_per_s=best_read[best_threads],
        copy_bytes_per_s=max(best_copy.values()),
        duration_s=time.perf_counter() - start,
        threads=best_threads,
        size_bytes=size,
    )
