"""Detect this machine's CPU, RAM and GPUs on Linux, macOS and Windows, without admin rights.

Each probe (a command, a file, a library) runs in its own daemon thread with its own short
timeout, all at once, under one overall deadline: a probe that fails or hangs leaves its
fields None and a ProbeNote that says why, and detection returns on time regardless (a hung
thread is abandoned, never joined). The measured RAM bandwidth probe runs after the command
probes, alone, so that they do not disturb it.
"""

from __future__ import annotations

import contextlib
import platform
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from advisor.core.hardware import parsers as P
from advisor.core.hardware.model import (
    CpuInfo,
    GpuInfo,
    HardwareReport,
    MemoryModule,
    ProbeNote,
    RamInfo,
)
from advisor.core.hardware.probes import (
    CommandRunner,
    FileReader,
    LocalFileReader,
    SubprocessRunner,
)

DEFAULT_TIMEOUT_S = 5.0  # the whole command phase; the bandwidth probe adds about 1-2 s
_SHORT_S = 3.0  # lscpu, sysctl, dmidecode, lspci: answer in milliseconds when healthy
_LONG_S = 5.0  # system_profiler, PowerShell + CIM, nvidia-smi, rocm-smi: slower to start
_MIN_START_S = 0.2  # do not start a command with less time than this left

NVML_VIRTUALIZATION_VGPU = 2  # NVML_GPU_VIRTUALIZATION_MODE_VGPU: a guest's slice of a GPU
NVML_MIG_ENABLED = 1

# Apple Silicon: Metal's recommendedMaxWorkingSetSize, as llama.cpp logs show it: 2/3 of RAM
# on 8 and 16 GiB Macs (5726.63 MB of 8 GiB, 11453.25 MB of 16 GiB), 3/4 on 64 and 192 GiB.
_APPLE_GPU_SHARE_SMALL = 2 / 3
_APPLE_GPU_SHARE_LARGE = 3 / 4
_APPLE_SMALL_RAM_LIMIT_BYTES = 36 * P.GiB

_WINDOWS_SCRIPT = r"""
$ErrorActionPreference = 'SilentlyContinue'
$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = [System.Text.Encoding]::UTF8
$r = [ordered]@{}
$r.processor = @(Get-CimInstance -ClassName Win32_Processor | Select-Object Name, Manufacturer,
  NumberOfCores, NumberOfLogicalProcessors, MaxClockSpeed, Architecture)
$r.video = @(Get-CimInstance -ClassName Win32_VideoController | Select-Object Name,
  AdapterCompatibility, AdapterRAM, DriverVersion, PNPDeviceID, VideoProcessor)
$r.memory = @(Get-CimInstance -ClassName Win32_PhysicalMemory | Select-Object Capacity, Speed,
  ConfiguredClockSpeed, SMBIOSMemoryType, MemoryType, DataWidth, TotalWidth, DeviceLocator,
  BankLabel)
$r.system = @(Get-CimInstance -ClassName Win32_ComputerSystem | Select-Object Manufacturer, Model)
$k = 'HKLM:\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}'
$r.registry = @(Get-ChildItem -Path $k | Where-Object { $_.PSChildName -match '^\d{4}$' } |
  ForEach-Object { $p = Get-ItemProperty -Path $_.PSPath; [pscustomobject]@{
    Key = $_.PSChildName; DriverDesc = $p.DriverDesc; MatchingDeviceId = $p.MatchingDeviceId;
    qwMemorySize = $p.'HardwareInformation.qwMemorySize';
    MemorySize = $p.'HardwareInformation.MemorySize' } })
$r | ConvertTo-Json -Depth 5 -Compress
"""


def powershell_args(script: str = _WINDOWS_SCRIPT) -> list[str]:
    """The PowerShell command line for a script (encoded: no quoting can break it)."""
    import base64

    encoded = base64.b64encode(script.encode("utf-16-le")).decode("ascii")
    return [
        "powershell.exe",
        "-NoProfile",
        "-NonInteractive",
        "-NoLogo",
        "-ExecutionPolicy",
        "Bypass",
        "-EncodedCommand",
        encoded,
    ]


NVIDIA_SMI_QUERY = (
    "name,pci.bus_id,pci.device_id,memory.total,memory.free,driver_version,"
    "clocks.max.memory,mig.mode.current"
)


@dataclass
class _Context:
    runner: CommandRunner
    files: FileReader
    deadline: float  # time.monotonic() value
    nvml: Any  # the pynvml module, a test double, or None to import pynvml

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


@dataclass
class _TaskBox:
    notes: list[ProbeNote] = field(default_factory=list)
    value: Any = None
    done: bool = False


Task = Callable[[_Context, list[ProbeNote]], Any]


# --------------------------------------------------------------------------- probe helpers


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def _command(
    ctx: _Context,
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
    if budget < _MIN_START_S:
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
        why = _first_line(result.stderr) or _first_line(result.stdout) or "no output"
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


def _read(ctx: _Context, path: str) -> tuple[str | None, str | None]:
    try:
        result = ctx.files.read_text(path)
    except Exception as exc:
        return None, f"{path}: {type(exc).__name__}: {exc}"
    return result.text, result.error


def _glob(ctx: _Context, pattern: str) -> list[str]:
    try:
        return list(ctx.files.glob(pattern))
    except Exception:  # an unreadable /sys reads as "nothing there"
        return []


def _file(
    ctx: _Context,
    notes: list[ProbeNote],
    path: str,
    parse: Callable[[str], Any],
    describe: Callable[[Any], str] | None = None,
) -> Any:
    start = time.monotonic()
    text, error = _read(ctx, path)
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


def _describe_cpu(cpu: CpuInfo) -> str:
    return (
        f"{cpu.model or 'model unknown'}, {cpu.physical_cores} cores, {cpu.logical_cores} threads"
    )


def _describe_gpus(gpus: Sequence[GpuInfo]) -> str:
    return ", ".join(g.name for g in gpus) or "no GPU listed"


def _run_tasks(
    tasks: Sequence[tuple[str, Task]], ctx: _Context, timeout_s: float
) -> dict[str, _TaskBox]:
    """Run every task in a daemon thread; collect what finished by the deadline."""
    boxes: dict[str, _TaskBox] = {}
    threads: list[threading.Thread] = []
    for name, task in tasks:
        box = _TaskBox()
        boxes[name] = box

        def target(task: Task = task, box: _TaskBox = box, name: str = name) -> None:
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
    collected: dict[str, _TaskBox] = {}
    for name, box in boxes.items():
        done = box.done
        snapshot = _TaskBox(list(box.notes), box.value if done else None, done)
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


# --------------------------------------------------------------------------- NVIDIA


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def nvml_gpus(nvml: Any) -> tuple[GpuInfo, ...]:
    """Every NVIDIA GPU through NVML, with the theoretical bandwidth from bus width x clock."""
    nvml.nvmlInit()
    try:
        try:
            driver: str | None = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception:
            driver = None
        gpus: list[GpuInfo] = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)

            def ask(fn_name: str, *args: Any, handle: Any = handle) -> Any:
                try:
                    return getattr(nvml, fn_name)(handle, *args)
                except Exception:  # not supported on this GPU or driver
                    return None

            name = _text(ask("nvmlDeviceGetName") or "NVIDIA GPU")
            memory = ask("nvmlDeviceGetMemoryInfo")
            pci = ask("nvmlDeviceGetPciInfo")
            bus_bits = ask("nvmlDeviceGetMemoryBusWidth")
            clock = ask("nvmlDeviceGetMaxClockInfo", getattr(nvml, "NVML_CLOCK_MEM", 2))
            mig = ask("nvmlDeviceGetMigMode")
            virt = ask("nvmlDeviceGetVirtualizationMode")
            bandwidth = P.nvidia_theoretical_bandwidth(bus_bits, clock)
            notes = []
            if isinstance(mig, list | tuple) and mig and mig[0] == NVML_MIG_ENABLED:
                notes.append("MIG enabled: the GPU is split into slices")
            pci_id = None
            bus_id = None
            if pci is not None:
                device_id = getattr(pci, "pciDeviceId", None)
                pci_id = P.pci_id_from_nvidia(f"{device_id:08x}") if device_id else None
                bus_id = P.normalise_pci_bus_id(getattr(pci, "busId", None))
            gpus.append(
                GpuInfo(
                    name=name,
                    vendor="NVIDIA",
                    vram_total_bytes=getattr(memory, "total", None),
                    vram_free_bytes=getattr(memory, "free", None),
                    driver=driver,
                    pci_id=pci_id,
                    bus_width_bits=bus_bits or None,
                    memory_clock_mhz=float(clock) if clock else None,
                    bandwidth_bytes_per_s=bandwidth,
                    bandwidth_source=(
                        f"NVML: {bus_bits}-bit bus x {clock} MHz max memory clock x 2 "
                        f"= {bandwidth / 1e9:.0f} GB/s"
                        if bandwidth
                        else None
                    ),
                    is_virtual=virt == NVML_VIRTUALIZATION_VGPU,
                    source="NVML",
                    pci_bus_id=bus_id,
                    note="; ".join(notes) or None,
                )
            )
        return tuple(gpus)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def _nvidia_task(ctx: _Context, notes: list[ProbeNote]) -> tuple[GpuInfo, ...]:
    """NVML first (bus width and clocks); nvidia-smi when the library is missing or fails."""
    start = time.monotonic()
    nvml = ctx.nvml
    try:
        if nvml is None:
            import pynvml as nvml  # nvidia-ml-py; loads libnvidia-ml only when asked
        gpus = nvml_gpus(nvml)
        notes.append(
            ProbeNote("NVML", "ok", _describe_gpus(gpus), round(time.monotonic() - start, 3))
        )
        return gpus
    except Exception as exc:
        missing = "LibraryNotFound" in type(exc).__name__ or isinstance(exc, ImportError)
        notes.append(
            ProbeNote(
                "NVML",
                "unavailable" if missing else "failed",
                "no NVIDIA driver library (no NVIDIA GPU, or no driver)" if missing else str(exc),
                round(time.monotonic() - start, 3),
            )
        )
    gpus = _command(
        ctx,
        notes,
        "nvidia-smi --query-gpu",
        ["nvidia-smi", f"--query-gpu={NVIDIA_SMI_QUERY}", "--format=csv"],
        _LONG_S,
        P.parse_nvidia_smi_csv,
        describe=_describe_gpus,
    )
    if gpus is None and notes[-1].status == "failed":
        # Old drivers reject a query field they do not know; the XML report always works.
        gpus = _command(
            ctx,
            notes,
            "nvidia-smi -q -x",
            ["nvidia-smi", "-q", "-x"],
            _LONG_S,
            P.parse_nvidia_smi_xml,
            describe=_describe_gpus,
        )
    if not gpus:
        return ()
    return tuple(
        replace(
            g,
            bandwidth_source="unknown: nvidia-smi does not report the memory bus width "
            "(NVML does; the catalogue knows it)",
        )
        for g in gpus
    )


# --------------------------------------------------------------------------- Linux


def _linux_gpus_task(ctx: _Context, notes: list[ProbeNote]) -> list[GpuInfo]:
    """/sys/class/drm cards, named through lspci, with AMD details from rocm-smi."""
    start = time.monotonic()
    uevents = [
        p
        for p in _glob(ctx, "/sys/class/drm/card*/device/uevent")
        if re.search(r"/card\d+/device/uevent$", p)
    ]
    drm: list[GpuInfo] = []
    for path in uevents:
        text, _ = _read(ctx, path)
        if not text:
            continue
        values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        base = path.rsplit("/", 1)[0]
        vendor, _ = _read(ctx, f"{base}/vendor")
        device, _ = _read(ctx, f"{base}/device")
        total, _ = _read(ctx, f"{base}/mem_info_vram_total")
        used, _ = _read(ctx, f"{base}/mem_info_vram_used")
        if not vendor and "PCI_ID" in values:
            vendor, _, device = values["PCI_ID"].partition(":")
            vendor, device = f"0x{vendor}", f"0x{device}"
        if not vendor:
            continue  # a boot framebuffer (simpledrm, efifb), not a PCI display device
        drm.append(
            P.gpu_from_drm(
                values.get("PCI_SLOT_NAME"),
                (vendor or "").strip() or None,
                (device or "").strip() or None,
                (total or "").strip() or None,
                (used or "").strip() or None,
                values.get("DRIVER"),
            )
        )
    if not uevents:
        notes.append(
            ProbeNote(
                "/sys/class/drm",
                "unavailable",
                "no display devices under /sys/class/drm (no GPU, or no GPU driver loaded)",
                round(time.monotonic() - start, 3),
            )
        )
        return []
    notes.append(
        ProbeNote("/sys/class/drm", "ok", _describe_gpus(drm), round(time.monotonic() - start, 3))
    )
    pci = _command(
        ctx,
        notes,
        "lspci",
        ["lspci", "-D", "-nnk"],
        _SHORT_S,
        P.parse_lspci,
        describe=lambda devs: f"{sum(d.is_display for d in devs)} display devices",
    )
    named: list[GpuInfo] = []
    for gpu in drm:
        match = next((d for d in pci or () if d.slot == gpu.pci_bus_id and d.is_display), None)
        if match is None:
            named.append(gpu)
            continue
        from_pci = P.gpu_from_pci(match)
        named.append(
            replace(
                gpu,
                name=from_pci.name,
                driver=gpu.driver or from_pci.driver,
                note=gpu.note or from_pci.note,
                source="/sys/class/drm + lspci",
            )
        )
    if any(g.vendor == "AMD" for g in named):
        rocm = _command(
            ctx,
            notes,
            "rocm-smi",
            ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showbus", "--json"],
            _LONG_S,
            P.parse_rocm_smi_json,
            describe=_describe_gpus,
        )
        if rocm:
            named = merge_gpus(list(rocm), named)
    return named


def _linux_memory_task(ctx: _Context, notes: list[ProbeNote]) -> tuple[MemoryModule, ...]:
    """Memory modules from dmidecode (usually needs root) or, failing that, from EDAC."""
    modules = _command(
        ctx,
        notes,
        "dmidecode -t memory",
        ["dmidecode", "-t", "memory"],
        _SHORT_S,
        _parse_dmidecode_strict,
        describe=_describe_modules,
    )
    if modules:
        return modules
    # EDAC (servers with ECC) tells size, type and slot without root, though not the speed.
    start = time.monotonic()
    edac: list[MemoryModule] = []
    for size_path in _glob(ctx, "/sys/devices/system/edac/mc/mc*/dimm*/size"):
        base = size_path.rsplit("/", 1)[0]
        size, _ = _read(ctx, size_path)
        mem_type, _ = _read(ctx, f"{base}/dimm_mem_type")
        label, _ = _read(ctx, f"{base}/dimm_label")
        size_mb = P.to_int(size)
        if size_mb:
            kind = (mem_type or "").strip()
            kind_match = re.search(r"(LP)?DDR\d", kind)
            edac.append(
                MemoryModule(
                    size_bytes=size_mb * P.MiB,
                    type=kind_match.group(0) if kind_match else None,
                    speed_mts=None,
                    locator=(label or "").strip() or None,
                )
            )
    notes.append(
        ProbeNote(
            "/sys/devices/system/edac",
            "ok" if edac else "unavailable",
            _describe_modules(tuple(edac)) if edac else "no EDAC memory controller exposed",
            round(time.monotonic() - start, 3),
        )
    )
    return tuple(edac)


def _parse_dmidecode_strict(text: str) -> tuple[MemoryModule, ...]:
    reason = P.dmidecode_failure_reason(text, "")
    if reason:
        raise ValueError(reason)
    return P.parse_dmidecode_memory(text)


def _describe_modules(modules: tuple[MemoryModule, ...]) -> str:
    if not modules:
        return "no populated modules"
    kinds = sorted({m.type or "?" for m in modules})
    speeds = sorted({m.speed_mts for m in modules if m.speed_mts})
    speed = f" at {speeds[0]} MT/s" if speeds else ""
    return f"{len(modules)} modules, {'/'.join(kinds)}{speed}"


def _linux_hybrid_task(ctx: _Context, notes: list[ProbeNote]) -> tuple[int, int] | None:
    """Intel hybrid CPUs: logical CPUs on P-cores and on E-cores (perf PMU cpu lists)."""
    core_text, _ = _read(ctx, "/sys/devices/cpu_core/cpus")
    atom_text, _ = _read(ctx, "/sys/devices/cpu_atom/cpus")
    if not core_text or not atom_text:
        notes.append(
            ProbeNote("/sys/devices/cpu_atom", "unavailable", "not an Intel hybrid (P/E) CPU")
        )
        return None
    p_logical = len(P.parse_cpu_list(core_text))
    e_logical = len(P.parse_cpu_list(atom_text))
    notes.append(
        ProbeNote(
            "/sys/devices/cpu_atom",
            "ok",
            f"{p_logical} logical CPUs on P-cores, {e_logical} on E-cores",
        )
    )
    return p_logical, e_logical


def _linux_machine_task(ctx: _Context, notes: list[ProbeNote]) -> str | None:
    vendor, _ = _read(ctx, "/sys/class/dmi/id/sys_vendor")
    product, error = _read(ctx, "/sys/class/dmi/id/product_name")
    junk = {"", "to be filled by o.e.m.", "system product name", "default string", "none"}
    parts = [p.strip() for p in (vendor, product) if p and p.strip().lower() not in junk]
    if not parts:
        notes.append(ProbeNote("/sys/class/dmi/id", "unavailable", error or "no DMI product name"))
        return None
    notes.append(ProbeNote("/sys/class/dmi/id", "ok", " ".join(parts)))
    return " ".join(parts)


def _linux_tasks() -> list[tuple[str, Task]]:
    return [
        (
            "lscpu",
            lambda c, n: _command(
                c, n, "lscpu", ["lscpu"], _SHORT_S, P.parse_lscpu, describe=_describe_cpu
            ),
        ),
        (
            "/proc/cpuinfo",
            lambda c, n: _file(c, n, "/proc/cpuinfo", P.parse_proc_cpuinfo, _describe_cpu),
        ),
        ("hybrid", _linux_hybrid_task),
        ("memory", _linux_memory_task),
        ("machine", _linux_machine_task),
        ("gpus", _linux_gpus_task),
        ("nvidia", _nvidia_task),
    ]


# --------------------------------------------------------------------------- macOS


def _mac_tasks() -> list[tuple[str, Task]]:
    def sp(data_type: str, parse: Callable[[str], Any], describe: Callable[[Any], str]) -> Task:
        return lambda c, n: _command(
            c,
            n,
            f"system_profiler {data_type}",
            ["system_profiler", data_type, "-json"],
            _LONG_S,
            parse,
            describe=describe,
        )

    return [
        (
            "sysctl",
            lambda c, n: _command(
                c,
                n,
                "sysctl",
                ["sysctl", "hw", "machdep.cpu", "iogpu", "sysctl.proc_translated"],
                _SHORT_S,
                P.parse_sysctl,
                accept_nonzero=True,
                describe=lambda v: f"{len(v)} values",
            ),
        ),
        (
            "sp-hardware",
            sp(
                "SPHardwareDataType",
                P.parse_sp_hardware,
                lambda h: h.chip or h.cpu_type or "no chip name",
            ),
        ),
        ("sp-displays", sp("SPDisplaysDataType", P.parse_sp_displays, _describe_gpus)),
        (
            "sp-memory",
            sp("SPMemoryDataType", P.parse_sp_memory, lambda m: m.type or "type not reported"),
        ),
    ]


# --------------------------------------------------------------------------- Windows


@dataclass(frozen=True)
class _WindowsBundle:
    cpu: CpuInfo | None
    gpus: tuple[GpuInfo, ...]
    modules: tuple[MemoryModule, ...]
    machine: str | None


def parse_windows_bundle(text: str) -> _WindowsBundle:
    """Split detection's one PowerShell answer (CIM classes + registry) and parse each part."""
    data = P._load_json(text)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")

    def records(key: str) -> list[dict[str, Any]]:
        value = data.get(key)
        items = value if isinstance(value, list) else [value] if value else []
        return [i for i in items if isinstance(i, dict)]

    processors = records("processor")
    cpu = P._cpu_from_win_records(processors) if processors else None
    gpus = P.video_controllers_from_records(records("video"))
    registry = P.parse_windows_registry_qwmemorysize(records("registry"))
    gpus = P.apply_windows_registry_vram(gpus, registry)
    system = records("system")
    machine = None
    if system:
        parts = [str(system[0].get(k) or "").strip() for k in ("Manufacturer", "Model")]
        machine = " ".join(p for p in parts if p and "o.e.m." not in p.lower()) or None
    return _WindowsBundle(cpu, gpus, P.memory_modules_from_cim(records("memory")), machine)


def _windows_cim_task(ctx: _Context, notes: list[ProbeNote]) -> _WindowsBundle | None:
    bundle = _command(
        ctx,
        notes,
        "PowerShell CIM (Win32_Processor, Win32_VideoController, "
        "Win32_PhysicalMemory, display registry)",
        powershell_args(),
        _LONG_S,
        parse_windows_bundle,
        describe=lambda b: f"{_describe_gpus(b.gpus)}; {_describe_modules(b.modules)}",
    )
    if bundle is not None:
        return bundle
    # wmic is deprecated and gone from recent Windows 11, but older machines still have it.
    cpu = _command(
        ctx,
        notes,
        "wmic cpu",
        [
            "wmic",
            "cpu",
            "get",
            "Name,Manufacturer,NumberOfCores,NumberOfLogicalProcessors",
            "/format:list",
        ],
        _SHORT_S,
        P.parse_wmic_cpu,
        describe=_describe_cpu,
    )
    gpus = _command(
        ctx,
        notes,
        "wmic path Win32_VideoController",
        [
            "wmic",
            "path",
            "Win32_VideoController",
            "get",
            "Name,AdapterCompatibility,AdapterRAM,DriverVersion,PNPDeviceID",
            "/format:list",
        ],
        _SHORT_S,
        lambda t: P.video_controllers_from_records(P.parse_wmic_records(t)),
        describe=_describe_gpus,
    )
    if cpu is None and gpus is None:
        return None
    return _WindowsBundle(cpu, gpus or (), (), None)


def _windows_tasks() -> list[tuple[str, Task]]:
    return [("cim", _windows_cim_task), ("nvidia", _nvidia_task)]


# --------------------------------------------------------------------------- assembly


def _psutil_basics(notes: list[ProbeNote]) -> tuple[CpuInfo, int | None, int | None]:
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


def _numpy_features() -> tuple[str, ...]:
    """CPU features from numpy's runtime dispatch (no AVX_VNNI, AMX or I8MM there)."""
    try:
        try:
            from numpy._core._multiarray_umath import __cpu_features__ as found
        except ImportError:  # numpy 1.x
            from numpy.core._multiarray_umath import (  # type: ignore[no-redef]
                __cpu_features__ as found,
            )
    except Exception:
        return ()
    return P.canonical_cpu_features(name for name, present in found.items() if present)


def _os_version(system: str) -> str:
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


def _apple_gpu_share(ram_total: int | None, wired_limit_mb: int | None) -> tuple[int | None, str]:
    if wired_limit_mb:
        return wired_limit_mb * P.MiB, f"iogpu.wired_limit_mb is set to {wired_limit_mb} MiB"
    if not ram_total:
        return None, "unknown: total RAM unknown"
    share = (
        _APPLE_GPU_SHARE_SMALL
        if ram_total <= _APPLE_SMALL_RAM_LIMIT_BYTES
        else (_APPLE_GPU_SHARE_LARGE)
    )
    return int(ram_total * share), (
        f"unified memory: the GPU may use about {share:.0%} of RAM (Metal's "
        "recommendedMaxWorkingSetSize: 2/3 up to 36 GB, 3/4 above; an estimate)"
    )


def _value(boxes: dict[str, _TaskBox], name: str) -> Any:
    box = boxes.get(name)
    return box.value if box else None


def detect_hardware(
    *,
    probe_bandwidth: bool = True,
    runner: CommandRunner | None = None,
    system: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    files: FileReader | None = None,
    nvml: Any = None,
    bandwidth_target_s: float = 1.0,
) -> HardwareReport:
    """Detect CPU, RAM and GPUs; never raises for a failed probe and returns on time.

    `system` overrides platform.system() ('Linux', 'Darwin', 'Windows') and `runner`,
    `files` and `nvml` replace the subprocess runner, the file reader and the pynvml module,
    so tests can replay recorded outputs or make every probe hang. The command probes share
    one deadline of `timeout_s`; the bandwidth probe (about 1-2 s) runs after them.
    Fields left None are unknown; `notes` says for every probe what it did and why.
    """
    actual_system = platform.system()
    system = system or actual_system
    notes: list[ProbeNote] = []
    base_cpu, ram_total, ram_available = _psutil_basics(notes)
    ctx = _Context(
        runner=runner or SubprocessRunner(),
        files=files or LocalFileReader(),
        deadline=time.monotonic() + timeout_s,
        nvml=nvml,
    )
    if system == "Linux":
        tasks = _linux_tasks()
    elif system == "Darwin":
        tasks = _mac_tasks()
    elif system == "Windows":
        tasks = _windows_tasks()
    else:
        tasks = []
        notes.append(ProbeNote("platform", "unavailable", f"no hardware probes for {system}"))
    boxes = _run_tasks(tasks, ctx, timeout_s)
    for box in boxes.values():
        notes.extend(box.notes)

    machine: str | None = None
    modules: tuple[MemoryModule, ...] = ()
    gpus: list[GpuInfo] = []
    ram_type: str | None = None
    apple_silicon = False
    bandwidth_note: str | None = None
    wired_limit_mb: int | None = None
    numpy_ok = system == actual_system  # numpy describes this machine, not a replayed one

    if system == "Linux":
        cpu = merge_cpu(_value(boxes, "lscpu"), _value(boxes, "/proc/cpuinfo"), base_cpu)
        hybrid = _value(boxes, "hybrid")
        if hybrid and cpu.physical_cores:
            _, e_logical = hybrid
            e_cores = e_logical  # E-cores have no SMT
            p_cores = max(cpu.physical_cores - e_cores, 0)
            cpu = replace(
                cpu,
                performance_cores=p_cores,
                efficiency_cores=e_cores,
                core_types=(("P-core", p_cores), ("E-core", e_cores)),
            )
        modules = _value(boxes, "memory") or ()
        machine = _value(boxes, "machine")
        gpus = merge_gpus(list(_value(boxes, "nvidia") or ()), list(_value(boxes, "gpus") or ()))
        if not modules:
            reasons = [
                n.detail for n in notes if n.probe.startswith("dmidecode") and n.status != "ok"
            ]
            why = reasons[0] if reasons else ""
            if "Permission denied" in why:
                why = f"dmidecode needs root to read the SMBIOS tables: {why}"
            bandwidth_note = "unknown: memory module speeds could not be read" + (
                f" ({why})" if why else ""
            )
    elif system == "Darwin":
        values: dict[str, str] = _value(boxes, "sysctl") or {}
        hw: P.SpHardware | None = _value(boxes, "sp-hardware")
        sysctl_cpu = P.cpu_info_from_sysctl(values) if values else None
        sp_cpu = P.cpu_info_from_sp_hardware(hw) if hw else None
        cpu = merge_cpu(sysctl_cpu, sp_cpu, base_cpu)
        raw_brand = values.get("machdep.cpu.brand_string", "")
        if "(Virtual)" in raw_brand or (hw and hw.chip_is_virtual):
            notes.append(
                ProbeNote(
                    "virtual machine",
                    "ok",
                    "macOS runs in a virtual machine: CPU and GPU are virtual",
                )
            )
        if values.get("sysctl.proc_translated") == "1":
            cpu = replace(cpu, architecture="arm64")
            notes.append(
                ProbeNote(
                    "Rosetta 2",
                    "ok",
                    "this process runs under Rosetta 2 "
                    "(x86_64 on Apple Silicon); the hardware is arm64",
                )
            )
        apple_silicon = cpu.architecture == "arm64" or bool(hw and hw.chip)
        machine = values.get("hw.model") or (hw.machine_model if hw else None)
        wired_limit_mb = P.to_int(values.get("iogpu.wired_limit_mb")) or None
        # hw.memsize is what psutil reads on a Mac; taking it first keeps replays consistent.
        ram_total = (
            P.to_int(values.get("hw.memsize")) or (hw.memory_bytes if hw else None) or ram_total
        )
        memory: P.SpMemory | None = _value(boxes, "sp-memory")
        if memory:
            modules = memory.modules
            ram_type = memory.type
        gpus = list(_value(boxes, "sp-displays") or ())
        if apple_silicon:
            share, share_note = _apple_gpu_share(ram_total, wired_limit_mb)
            gpus = [
                replace(g, vram_total_bytes=share, note=share_note)
                if g.unified_memory and g.vendor == "Apple"
                else g
                for g in gpus
            ]
            bandwidth_note = (
                "Apple unified memory: the theoretical bandwidth comes from the catalogue "
                "(by chip), not from module speeds"
            )
    elif system == "Windows":
        bundle: _WindowsBundle | None = _value(boxes, "cim")
        cpu = merge_cpu(bundle.cpu if bundle else None, base_cpu)
        if bundle:
            modules = bundle.modules
            machine = bundle.machine
        gpus = merge_gpus(list(_value(boxes, "nvidia") or ()), list(bundle.gpus if bundle else ()))
        if cpu.vendor == "Intel":
            notes.append(
                ProbeNote(
                    "Intel hybrid cores",
                    "unavailable",
                    "whether this CPU has P- and E-cores is not read on Windows",
                )
            )
    else:
        cpu = base_cpu

    if not cpu.features and numpy_ok:
        features = _numpy_features()
        if features:
            cpu = replace(cpu, features=features)
            notes.append(
                ProbeNote(
                    "numpy CPU dispatch",
                    "ok",
                    "features from numpy's runtime detection "
                    "(AVX_VNNI, AMX and I8MM are not detected there)",
                )
            )

    estimate = P.estimate_ram_bandwidth(modules) if modules else None
    if apple_silicon:
        theoretical = None
        source = bandwidth_note
    elif estimate is not None:
        theoretical = estimate.bytes_per_s
        source = estimate.source
        ram_type = ram_type or estimate.type
    else:
        theoretical = None
        source = bandwidth_note or "unknown: memory modules could not be read"

    measured = measured_s = measured_copy = None
    if probe_bandwidth:
        measured, measured_copy, measured_s = _measure(notes, bandwidth_target_s)
    else:
        notes.append(ProbeNote("memory bandwidth probe", "unavailable", "not run (asked not to)"))

    ram = RamInfo(
        total_bytes=ram_total,
        available_bytes=ram_available,
        type=ram_type,
        speed_mts=estimate.speed_mts if estimate else None,
        modules=modules,
        channels=estimate.channels if estimate and not apple_silicon else None,
        theoretical_bandwidth_bytes_per_s=theoretical,
        theoretical_bandwidth_source=source,
        measured_bandwidth_bytes_per_s=measured,
        measured_probe_s=measured_s,
        measured_copy_bandwidth_bytes_per_s=measured_copy,
        bus_width_bits=estimate.bus_width_bits if estimate and not apple_silicon else None,
    )
    return HardwareReport(
        os=system,
        os_version=_os_version(system) if system == actual_system else system,
        machine=machine,
        cpu=cpu,
        ram=ram,
        gpus=tuple(gpus),
        backend=None,
        notes=tuple(notes),
        detected_at=time.time(),
    )


def _measure(
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
