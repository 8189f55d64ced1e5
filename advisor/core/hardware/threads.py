"""The thread count llama-bench uses when it is given no -t: llama.cpp's rule, per OS.

llama-bench's default is `common_cpu_get_num_math()` (tools/llama-bench/llama-bench.cpp,
`cmd_params_defaults`, the `n_threads` entry). That function, in common/common.cpp at llama.cpp
commit 00758e06b449b7a216dce657223ab6048def0e93 (line numbers below are that file's), decides:

- Linux on x86-64 (not Android), hybrid CPU (cpuid leaf 7, EDX bit 15; :168-172): pin to each
  online CPU number in turn; skip a CPU whose cpuid leaf 0x1A says Atom (E-core, :174-180);
  on any other, count one thread and skip the next CPU number as its hyper-thread sibling
  (:182-195, called from :208-216). If pinning fails (a CPU outside the container's cpuset),
  or the CPU is not hybrid, the physical-core count below.
- Linux, any CPU: the number of distinct /sys/devices/system/cpu/cpuN/topology/thread_siblings
  masks, reading cpu0, cpu1, ... up to the first one missing (:88-104). E-cores count.
- macOS: sysctl hw.perflevel0.physicalcpu, the fastest core tier only (:108), else
  hw.physicalcpu (:112). Not "all physical cores": 8 on an 8P+4E M2 Pro, 6 on an M5 Max whose
  fastest tier is 6 'Super' cores.
- Windows 7+ built with MSVC/clang (not MinGW-w64): one per RelationProcessorCore entry of
  GetLogicalProcessorInformationEx, i.e. every physical core, E-cores included (:116-143).
  "logical / 2" is only its fallback when that call fails (:119).
- Anything else, or when the above found nothing: hardware_concurrency, halved above 4 (:145-146).
- POWER: physical cores x min(SMT, 2) (:218-225).

`CpuLayout` holds exactly the facts those rules read; `probe_cpu_layout` fills it on each OS.
"""

from __future__ import annotations

import platform as platform_module
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from advisor.core.hardware.probes import CommandRunner, FileReader, LocalFileReader

LLAMA_CPP_COMMIT = "00758e06b449b7a216dce657223ab6048def0e93"
_SOURCE = "common/common.cpp"

OsName = Literal["linux", "android", "darwin", "windows", "other"]


@dataclass(frozen=True)
class CpuLayout:
    """The facts llama.cpp's default thread count reads (see the module docstring)."""

    os: OsName
    arch: str  # "x86_64", "arm64", "ppc64le" ...
    logical_cpus: int  # online logical CPUs (sysconf _SC_NPROCESSORS_ONLN)
    physical_cores: int | None = None  # macOS hw.physicalcpu; Windows RelationProcessorCore count
    performance_cores: int | None = None  # macOS hw.perflevel0.physicalcpu; Linux hybrid P-cores
    efficiency_cores: int | None = None  # macOS hw.perflevel1.physicalcpu; Linux hybrid E-cores
    thread_siblings: tuple[str, ...] = ()  # Linux: cpu0, cpu1 ... topology/thread_siblings
    hybrid: bool = False  # x86 hybrid (Linux: /sys/devices/cpu_atom exists)
    efficiency_cpus: frozenset[int] = frozenset()  # Linux: /sys/devices/cpu_atom/cpus
    pinnable_cpus: frozenset[int] | None = None  # online CPUs in our cpuset; None: all
    mingw_build: bool = False  # a MinGW-w64 build of llama.cpp skips the Windows core count


@dataclass(frozen=True)
class ThreadChoice:
    """The thread count, the rule that gave it, and the llama.cpp line that says so."""

    threads: int
    rule: str
    source_line: str


def _at(lines: str) -> str:
    return f"{_SOURCE}:{lines} @ {LLAMA_CPP_COMMIT[:12]}"


def llama_bench_default_threads(layout: CpuLayout) -> ThreadChoice:
    """What llama-bench would print in its `threads` column without -t, on this layout."""
    if layout.os == "linux" and layout.arch == "x86_64" and layout.hybrid:
        counted = _count_math_cpus(layout)
        if counted > 0:
            rule = "hybrid x86 on Linux: one thread per P-core; E-cores and HT siblings skipped"
            return ThreadChoice(counted, rule, _at("182-195,208-216"))
    if layout.arch.startswith(("ppc", "powerpc")):
        cores = _physical_cores(layout).threads
        smt = layout.logical_cpus // cores if layout.logical_cpus > cores > 0 else 1
        rule = f"POWER: physical cores ({cores}) x min(SMT {smt}, 2)"
        return ThreadChoice(cores * min(smt, 2), rule, _at("218-225"))
    return _physical_cores(layout)


def _count_math_cpus(layout: CpuLayout) -> int:
    """cpu_count_math_cpus(): -1 when a CPU number cannot be pinned (llama.cpp then falls back)."""
    pinnable = layout.pinnable_cpus
    result, cpu = 0, 0
    while cpu < layout.logical_cpus:
        if pinnable is not None and cpu not in pinnable:
            return -1
        if cpu in layout.efficiency_cpus:
            cpu += 1
            continue
        cpu += 2  # the next CPU number is taken to be this core's hyper-thread sibling
        result += 1
    return result


def _physical_cores(layout: CpuLayout) -> ThreadChoice:
    """common_cpu_get_num_physical_cores(), per OS, with its hardware_concurrency fallback."""
    if layout.os in ("linux", "android") and layout.thread_siblings:
        count = len(set(layout.thread_siblings))
        rule = f"Linux: {count} distinct thread_siblings masks (physical cores, E-cores included)"
        return ThreadChoice(count, rule, _at("88-104"))
    if layout.os == "darwin" and layout.performance_cores:
        rule = "macOS: hw.perflevel0.physicalcpu (the fastest core tier only)"
        return ThreadChoice(layout.performance_cores, rule, _at("108-111"))
    if layout.os == "darwin" and layout.physical_cores:
        return ThreadChoice(layout.physical_cores, "macOS: hw.physicalcpu", _at("112-114"))
    if layout.os == "windows" and not layout.mingw_build and layout.physical_cores:
        rule = "Windows: one per physical core (RelationProcessorCore), E-cores included"
        return ThreadChoice(layout.physical_cores, rule, _at("116-143"))
    n = layout.logical_cpus
    threads = n if 0 < n <= 4 else n // 2 if n > 4 else 4
    rule = f"fallback: {n} logical CPUs, halved above 4"
    return ThreadChoice(threads, rule, _at("119" if layout.os == "windows" else "145-146"))


# --------------------------------------------------------------------------- probes


def parse_cpulist(text: str | None) -> frozenset[int]:
    """A kernel CPU list ('0-1,3,6,8,10', '16-31') as a set of CPU numbers."""
    cpus: set[int] = set()
    for part in (text or "").strip().split(","):
        if not part.strip():
            continue
        first, _, last = part.strip().partition("-")
        try:
            cpus.update(range(int(first), int(last or first) + 1))
        except ValueError:
            return frozenset()
    return frozenset(cpus)


def parse_sysctl(text: str) -> dict[str, str]:
    """'name: value' lines of `sysctl a b c` (macOS) as a dict; other lines are ignored."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() and " " not in name.strip():
            values[name.strip()] = value.strip()
    return values


def _int_or_none(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None


def probe_linux_layout(reader: FileReader, arch: str, os_name: OsName = "linux") -> CpuLayout:
    """Fill a CpuLayout from /sys the way llama.cpp reads it (plus hybrid P/E core counts)."""
    cpu_dir = "/sys/devices/system/cpu"
    online = parse_cpulist(reader.read_text(f"{cpu_dir}/online").text)
    siblings: list[str] = []
    while len(siblings) < 8192:  # llama.cpp stops at the first cpuN without the file
        text = reader.read_text(f"{cpu_dir}/cpu{len(siblings)}/topology/thread_siblings").text
        if text is None:
            break
        siblings.append(text.strip())
    atom = parse_cpulist(reader.read_text("/sys/devices/cpu_atom/cpus").text)
    core = parse_cpulist(reader.read_text("/sys/devices/cpu_core/cpus").text)
    cpuset = parse_cpulist(reader.read_text("/sys/fs/cgroup/cpuset.cpus.effective").text)
    logical = len(online) or len(siblings)

    def cores_of(cpus: frozenset[int]) -> int | None:
        masks = {siblings[c] for c in cpus if c < len(siblings)}
        return len(masks) if masks else None

    return CpuLayout(
        os=os_name,
        arch=arch,
        logical_cpus=logical,
        physical_cores=len(set(siblings)) or None,
        performance_cores=cores_of(core) if atom else None,
        efficiency_cores=cores_of(atom) if atom else None,
        thread_siblings=tuple(siblings),
        hybrid=bool(atom),
        efficiency_cpus=atom,
        pinnable_cpus=(online & cpuset) if cpuset else (online or None),
    )


def probe_macos_layout(runner: CommandRunner, arch: str) -> CpuLayout:
    """Fill a CpuLayout from sysctl (an unknown name, as on macOS < 12, is just absent)."""
    names = ["hw.logicalcpu", "hw.physicalcpu", "hw.perflevel0.physicalcpu"]
    result = runner.run(["sysctl", *names, "hw.perflevel1.physicalcpu"], timeout_s=5.0)
    return macos_layout_from_sysctl(result.stdout, arch)


def macos_layout_from_sysctl(text: str, arch: str) -> CpuLayout:
    """A CpuLayout from recorded `sysctl` output (name: value lines)."""
    values = parse_sysctl(text)
    perf0 = _int_or_none(values.get("hw.perflevel0.physicalcpu"))
    perf1 = _int_or_none(values.get("hw.perflevel1.physicalcpu"))
    physical = _int_or_none(values.get("hw.physicalcpu"))
    if physical is None and perf0 is not None:
        physical = perf0 + (perf1 or 0)
    logical = _int_or_none(values.get("hw.logicalcpu")) or physical or 0
    return CpuLayout(
        os="darwin",
        arch=arch,
        logical_cpus=logical,
        physical_cores=physical,
        performance_cores=perf0,
        efficiency_cores=perf1,
    )


def probe_windows_layout(cpu_count: Callable[[bool], int | None], arch: str) -> CpuLayout:
    """Fill a CpuLayout from psutil, whose physical count is the RelationProcessorCore count."""
    return CpuLayout(
        os="windows",
        arch=arch,
        logical_cpus=cpu_count(True) or 0,
        physical_cores=cpu_count(False),
    )


def normalise_arch(machine: str) -> str:
    """platform.machine() in llama.cpp's terms: 'AMD64' and 'x64' are 'x86_64'."""
    lowered = machine.lower()
    return "x86_64" if lowered in ("amd64", "x64", "x86_64") else lowered


def probe_cpu_layout(
    *,
    platform: str = sys.platform,
    machine: str | None = None,
    reader: FileReader | None = None,
    runner: CommandRunner | None = None,
    cpu_count: Callable[[bool], int | None] | None = None,
) -> CpuLayout:
    """The CpuLayout of this machine (everything injectable for tests)."""
    arch = normalise_arch(machine or platform_module.machine())
    if platform.startswith("linux") or platform == "android":
        os_name: OsName = "android" if platform == "android" else "linux"
        return probe_linux_layout(reader or LocalFileReader(), arch, os_name)
    if platform == "darwin":
        if runner is None:
            from advisor.core.hardware.probes import SubprocessRunner

            runner = SubprocessRunner()
        return probe_macos_layout(runner, arch)
    if cpu_count is None:
        import psutil

        def cpu_count(logical: bool) -> int | None:
            return psutil.cpu_count(logical=logical)

    if platform == "win32":
        return probe_windows_layout(cpu_count, arch)
    return CpuLayout(os="other", arch=arch, logical_cpus=cpu_count(True) or 0)


def default_threads() -> ThreadChoice:
    """llama-bench's default thread count on this machine, with the rule that gave it."""
    try:
        return llama_bench_default_threads(probe_cpu_layout())
    except (OSError, ValueError):
        import os

        n = os.cpu_count() or 4
        return ThreadChoice(max(1, n // 2 if n > 4 else n), "fallback: logical CPUs", "")
