"""Linux probes: lscpu, /proc/cpuinfo, dmidecode, lspci, the DRM sysfs tree, rocm-smi,
hybrid Intel cores."""

from __future__ import annotations

import re
import time
from dataclasses import replace

from advisor.core.hardware import parsers as P
from advisor.core.hardware.detect.common import (
    LONG_S,
    SHORT_S,
    Found,
    ProbeContext,
    Task,
    TaskBox,
    box_value,
    describe_cpu,
    describe_gpus,
    glob_files,
    merge_cpu,
    merge_gpus,
    probe_file,
    read_file,
    run_command,
)
from advisor.core.hardware.detect.nvidia import nvidia_task
from advisor.core.hardware.model import (
    CpuInfo,
    GpuInfo,
    MemoryModule,
    ProbeNote,
)

# --------------------------------------------------------------------------- Linux


def _drm_cards(ctx: ProbeContext) -> tuple[list[str], list[GpuInfo]]:
    """(uevent paths, the PCI display devices) under /sys/class/drm."""
    uevents = [
        p
        for p in glob_files(ctx, "/sys/class/drm/card*/device/uevent")
        if re.search(r"/card\d+/device/uevent$", p)
    ]
    drm: list[GpuInfo] = []
    for path in uevents:
        text, _ = read_file(ctx, path)
        if not text:
            continue
        values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        base = path.rsplit("/", 1)[0]
        vendor, _ = read_file(ctx, f"{base}/vendor")
        device, _ = read_file(ctx, f"{base}/device")
        total, _ = read_file(ctx, f"{base}/mem_info_vram_total")
        used, _ = read_file(ctx, f"{base}/mem_info_vram_used")
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
    return uevents, drm


def _linux_gpus_task(ctx: ProbeContext, notes: list[ProbeNote]) -> list[GpuInfo]:
    """/sys/class/drm cards, named through lspci, with AMD details from rocm-smi."""
    start = time.monotonic()
    uevents, drm = _drm_cards(ctx)
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
        ProbeNote("/sys/class/drm", "ok", describe_gpus(drm), round(time.monotonic() - start, 3))
    )
    pci = run_command(
        ctx,
        notes,
        "lspci",
        ["lspci", "-D", "-nnk"],
        SHORT_S,
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
        rocm = run_command(
            ctx,
            notes,
            "rocm-smi",
            ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showbus", "--json"],
            LONG_S,
            P.parse_rocm_smi_json,
            describe=describe_gpus,
        )
        if rocm:
            named = merge_gpus(list(rocm), named)
    return named


def _linux_memory_task(ctx: ProbeContext, notes: list[ProbeNote]) -> tuple[MemoryModule, ...]:
    """Memory modules from dmidecode (usually needs root) or, failing that, from EDAC."""
    modules = run_command(
        ctx,
        notes,
        "dmidecode -t memory",
        ["dmidecode", "-t", "memory"],
        SHORT_S,
        _parse_dmidecode_strict,
        describe=_describe_modules,
    )
    if modules:
        return modules
    # EDAC (servers with ECC) tells size, type and slot without root, though not the speed.
    start = time.monotonic()
    edac: list[MemoryModule] = []
    for size_path in glob_files(ctx, "/sys/devices/system/edac/mc/mc*/dimm*/size"):
        base = size_path.rsplit("/", 1)[0]
        size, _ = read_file(ctx, size_path)
        mem_type, _ = read_file(ctx, f"{base}/dimm_mem_type")
        label, _ = read_file(ctx, f"{base}/dimm_label")
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


def _linux_hybrid_task(ctx: ProbeContext, notes: list[ProbeNote]) -> tuple[int, int] | None:
    """Intel hybrid CPUs: logical CPUs on P-cores and on E-cores (perf PMU cpu lists)."""
    core_text, _ = read_file(ctx, "/sys/devices/cpu_core/cpus")
    atom_text, _ = read_file(ctx, "/sys/devices/cpu_atom/cpus")
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


DEVICE_TREE_MODEL = "/proc/device-tree/model"


def _linux_machine_task(ctx: ProbeContext, notes: list[ProbeNote]) -> str | None:
    """The machine's product name: DMI on PCs; the device tree's model on Arm boards, which
    have no DMI ('Raspberry Pi 5 Model B Rev 1.0': their CPU is named only by its cores,
    'Cortex-A76', so the board is what tells the catalogue which chip and memory it is)."""
    vendor, _ = read_file(ctx, "/sys/class/dmi/id/sys_vendor")
    product, error = read_file(ctx, "/sys/class/dmi/id/product_name")
    junk = {"", "to be filled by o.e.m.", "system product name", "default string", "none"}
    parts = [p.strip() for p in (vendor, product) if p and p.strip().lower() not in junk]
    if parts:
        notes.append(ProbeNote("/sys/class/dmi/id", "ok", " ".join(parts)))
        return " ".join(parts)
    board, _ = read_file(ctx, DEVICE_TREE_MODEL)
    board = (board or "").replace("\x00", "").strip()
    if board:
        notes.append(ProbeNote(DEVICE_TREE_MODEL, "ok", board))
        return board
    notes.append(ProbeNote("/sys/class/dmi/id", "unavailable", error or "no DMI product name"))
    return None


def linux_tasks() -> list[tuple[str, Task]]:
    return [
        (
            "lscpu",
            lambda c, n: run_command(
                c, n, "lscpu", ["lscpu"], SHORT_S, P.parse_lscpu, describe=describe_cpu
            ),
        ),
        (
            "/proc/cpuinfo",
            lambda c, n: probe_file(c, n, "/proc/cpuinfo", P.parse_proc_cpuinfo, describe_cpu),
        ),
        ("hybrid", _linux_hybrid_task),
        ("memory", _linux_memory_task),
        ("machine", _linux_machine_task),
        ("gpus", _linux_gpus_task),
        ("nvidia", nvidia_task),
    ]


def linux_found(
    boxes: dict[str, TaskBox], notes: list[ProbeNote], base_cpu: CpuInfo, ram_total: int | None
) -> Found:
    """Join the Linux probes' results: CPU (with hybrid cores), modules, machine, GPUs."""
    cpu = merge_cpu(box_value(boxes, "lscpu"), box_value(boxes, "/proc/cpuinfo"), base_cpu)
    hybrid = box_value(boxes, "hybrid")
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
    found = Found(
        cpu,
        ram_total,
        machine=box_value(boxes, "machine"),
        modules=box_value(boxes, "memory") or (),
        gpus=merge_gpus(
            list(box_value(boxes, "nvidia") or ()), list(box_value(boxes, "gpus") or ())
        ),
    )
    if not found.modules:
        reasons = [n.detail for n in notes if n.probe.startswith("dmidecode") and n.status != "ok"]
        why = reasons[0] if reasons else ""
        if "Permission denied" in why:
            why = f"dmidecode needs root to read the SMBIOS tables: {why}"
        found.bandwidth_note = "unknown: memory module speeds could not be read" + (
            f" ({why})" if why else ""
        )
    return found
