"""What every platform's detection shares: the probe context and its deadline, running
commands, files and tasks under it, merging what several probes found, and the measured
RAM bandwidth."""

from __future__ import annotations

import platform
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from advisor.core.hardware import parsers as P
from advisor.core.hardware.model import (
    CpuInfo,
    GpuInfo,
    MemoryModule,
    ProbeNote,
)
from advisor.core.hardware.probes import (
    CommandRunner,
    FileReader,
)

DEFAULT_TIMEOUT_S = 5.0  # the whole command phase; the bandwidth probe adds about 1-2 s
SHORT_S = 3.0  # lscpu, sysctl, dmidecode, lspci: answer in milliseconds when healthy
LONG_S = 5.0  # system_profiler, PowerShell + CIM, nvidia-smi, rocm-smi: slower to start
MIN_START_S = 0.2  # do not start a command with less time than this left


@dataclass
class ProbeContext:
    runner: CommandRunner
    files: FileReader
    deadline: float  # time.monotonic() value
    nvml: Any  # the pynvml module, a test double, or None to import pynvml

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


@dataclass
class TaskBox:
    notes: list[ProbeNote] = field(default_factory=list)
    value: Any = None
    done: bool = False


Task = Callable[[ProbeContext, list[ProbeNote]], Any]


# --------------------------------------------------------------------------- probe helpers


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def run_command(
    ctx: ProbeContext,
    notes: list[ProbeNote],
    probe: str,
    args: Sequence[str],
    timeout_s: float,
    parse: Callable[[str], Any],
    *,
    accept_nonzero: bool = False,
    describe: Callable[[Any], str] | None = None,
) -> Any:
    """Run one command, parse its output, and leave exactly one note; None on any failure."""
    budget = min(timeout_s, ctx.remaining())
    if budget < MIN_START_S:
        notes.append(ProbeNote(probe, "timeout", "not started: the detection deadline was reached"))
        return None
    try:
        result = ctx.runner.run(list(args), budget)
    except Exception as exc:  # runners should not raise; a broken one must not crash detection
        notes.append(ProbeNote(probe, "failed", f"{type(exc).__name__}: {exc}"))
        return None
    duration = round(result.duration_s, 3)
    if result.not_found:
        notes.append(ProbeNote(probe, "unavailable", result.error or "not installed", duration))
        return None
    if result.timed_out:
        notes.append(ProbeNote(probe, "timeout", result.error or "timed out", duration))
        return None
    if result.error:
        notes.append(ProbeNote(probe, "failed", result.error, duration))
        return None
    if result.returncode != 0 and not (accept_nonzero and result.stdout.strip()):
        why = first_line(result.stderr) or first_line(result.stdout) or "no output"
        notes.append(
            ProbeNote(probe, "failed", f"exit status {result.returncode}: {why}", duration)
        )
        return None
    try:
        value = parse(result.stdout)
    except Exception as exc:
        notes.append(
            ProbeNote(probe, "failed", f"unreadable output ({type(exc).__name__}: {exc})", duration)
        )
        return None
    detail = describe(value) if describe else ""
    notes.append(ProbeNote(probe, "ok", detail, duration))
    return value


def read_file(ctx: ProbeContext, path: str) -> tuple[str | None, str | None]:
    try:
        result = ctx.files.read_text(path)
    except Exception as exc:
        return None, f"{path}: {type(exc).__name__}: {exc}"
    return result.text, result.error


def glob_files(ctx: ProbeContext, pattern: str) -> list[str]:
    try:
        return list(ctx.files.glob(pattern))
    except Exception:  # an unreadable /sys reads as "nothing there"
        return []


def probe_file(
    ctx: ProbeContext,
    notes: list[ProbeNote],
    path: str,
    parse: Callable[[str], Any],
    describe: Callable[[Any], str] | None = None,
) -> Any:
    start = time.monotonic()
    text, error = read_file(ctx, path)
    duration = round(time.monotonic() - start, 3)
    if text is None:
        status = "unavailable" if error and "does not exist" in error else "failed"
        notes.append(ProbeNote(path, status, error or "unreadable", duration))
        return None
    try:
        value = parse(text)
    except Exception as exc:
        notes.append(ProbeNote(path, "failed", f"unreadable ({type(exc).__name__}: {exc})"))
        return None
    notes.append(ProbeNote(path, "ok", describe(value) if describe else "", duration))
    return value


def describe_cpu(cpu: CpuInfo) -> str:
    return (
        f"{cpu.model or 'model unknown'}, {cpu.physical_cores} cores, {cpu.logical_cores} threads"
    )


def describe_gpus(gpus: Sequence[GpuInfo]) -> str:
    return ", ".join(g.name for g in gpus) or "no GPU listed"


def run_tasks(
    tasks: Sequence[tuple[str, Task]], ctx: ProbeContext, timeout_s: float
) -> dict[str, TaskBox]:
    """Run every task in a daemon thread; collect what finished by the deadline."""
    boxes: dict[str, TaskBox] = {}
    threads: list[threading.Thread] = []
    for name, task in tasks:
        box = TaskBox()
        boxes[name] = box

        def target(task: Task = task, box: TaskBox = box, name: str = name) -> None:
            try:
                box.value = task(ctx, box.notes)
            except Exception as exc:  # a bug in one probe must not take detection down
                box.notes.append(
                    ProbeNote(name, "failed", f"unexpected error: {type(exc).__name__}: {exc}")
                )
            finally:
                box.done = True

        thread = threading.Thread(target=target, name=f"advisor-probe-{name}", daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(max(0.0, ctx.remaining()))
    collected: dict[str, TaskBox] = {}
    for name, box in boxes.items():
        done = box.done
        snapshot = TaskBox(list(box.notes), box.value if done else None, done)
        if not done:
            snapshot.notes.append(
                ProbeNote(
                    name,
                    "timeout",
                    f"no answer within the {timeout_s:g} s detection deadline; left running",
                )
            )
        collected[name] = snapshot
    return collected


def merge_cpu(*candidates: CpuInfo | None) -> CpuInfo:
    """Field by field, the first known value among the candidates (best source first)."""
    present = [c for c in candidates if c is not None]
    values: dict[str, Any] = {}
    for f in fields(CpuInfo):
        known = [getattr(c, f.name) for c in present if getattr(c, f.name) not in (None, (), "")]
        if known:
            values[f.name] = known[0]
    return CpuInfo(**{"model": None, **values})


def _same_device(a: GpuInfo, b: GpuInfo) -> bool:
    if a.pci_bus_id and b.pci_bus_id:
        return a.pci_bus_id == b.pci_bus_id
    return bool(a.pci_id and a.pci_id == b.pci_id)


def merge_gpus(primary: Sequence[GpuInfo], secondary: Sequence[GpuInfo]) -> list[GpuInfo]:
    """Primary entries win; a secondary entry for the same device only fills their gaps.

    The same device means the same PCI bus id, or (where either lacks one) the same PCI
    vendor:device id, each secondary entry used once (two identical cards stay two).
    """
    merged = list(primary)
    used: set[int] = set()
    for i, gpu in enumerate(merged):
        for j, other in enumerate(secondary):
            if j in used or not _same_device(gpu, other):
                continue
            used.add(j)
            gaps = {
                name: getattr(other, name)
                for name in (
                    "vram_total_bytes",
                    "vram_free_bytes",
                    "pci_id",
                    "pci_bus_id",
                    "driver",
                    "gpu_cores",
                )
                if getattr(gpu, name) is None and getattr(other, name) is not None
            }
            if gaps:
                merged[i] = replace(gpu, **gaps, source=f"{gpu.source} + {other.source}")
            break
    merged.extend(g for j, g in enumerate(secondary) if j not in used)
    return merged


def psutil_basics(notes: list[ProbeNote]) -> tuple[CpuInfo, int | None, int | None]:
    try:
        import psutil

        vm = psutil.virtual_memory()
        cpu = CpuInfo(
            model=None,
            architecture=P.normalise_architecture(platform.machine()),
            physical_cores=psutil.cpu_count(logical=False),
            logical_cores=psutil.cpu_count(logical=True),
        )
        notes.append(ProbeNote("psutil", "ok", "RAM totals and core counts"))
        return cpu, vm.total, vm.available
    except Exception as exc:
        notes.append(ProbeNote("psutil", "failed", f"{type(exc).__name__}: {exc}"))
        return CpuInfo(model=None), None, None


def numpy_features() -> tuple[str, ...]:
    """CPU features from numpy's runtime dispatch (no AVX_VNNI, AMX or I8MM there)."""
    try:
        try:
            from numpy._core._multiarray_umath import (  # type: ignore[import-not-found]
                __cpu_features__ as found,
            )
        except ImportError:  # numpy 1.x
            from numpy.core._multiarray_umath import (  # type: ignore[no-redef]
                __cpu_features__ as found,
            )
    except Exception:
        return ()
    return P.canonical_cpu_features(name for name, present in found.items() if present)


def os_version(system: str) -> str:
    try:
        if system == "Linux":
            name = platform.freedesktop_os_release().get("PRETTY_NAME", "Linux")
            return f"{name}, kernel {platform.release()}"
        if system == "Darwin":
            return f"macOS {platform.mac_ver()[0]}"
        if system == "Windows":
            return f"Windows {platform.release()} ({platform.version()})"
    except Exception:
        pass
    return platform.platform()


def box_value(boxes: dict[str, TaskBox], name: str) -> Any:
    box = boxes.get(name)
    return box.value if box else None


def measure_ram_bandwidth(
    notes: list[ProbeNote], target_s: float
) -> tuple[float | None, float | None, float | None]:
    from advisor.core.hardware.membw import measure_memory_bandwidth

    try:
        result = measure_memory_bandwidth(target_s=target_s)
    except Exception as exc:  # MemoryError on a starved machine, for one
        notes.append(ProbeNote("memory bandwidth probe", "failed", f"{type(exc).__name__}: {exc}"))
        return None, None, None
    notes.append(
        ProbeNote(
            "memory bandwidth probe",
            "ok",
            f"read {result.read_bytes_per_s / 1e9:.1f} GB/s with {result.threads} thread(s), "
            f"copy {result.copy_bytes_per_s / 1e9:.1f} GB/s (read + write), "
            f"{result.size_bytes / P.MiB:.0f} MiB buffer, best of several repeats",
            round(result.duration_s, 3),
        )
    )
    return result.read_bytes_per_s, result.copy_bytes_per_s, round(result.duration_s, 3)


@dataclass
class Found:
    """What one platform's probes found, before the RAM bandwidth is worked out."""

    cpu: CpuInfo
    ram_total: int | None
    machine: str | None = None
    modules: tuple[MemoryModule, ...] = ()
    gpus: list[GpuInfo] = field(default_factory=list)
    ram_type: str | None = None
    apple_silicon: bool = False
    bandwidth_note: str | None = None
