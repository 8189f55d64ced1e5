"""This machine, as the advisor sees it: which device runs the model, at what bandwidth.

Joins the hardware report (what was detected) with the catalogue (what the vendor specifies)
into one `MachineProfile`: the device llama.cpp will run on (a catalogued GPU or Apple chip,
or this computer's CPU and RAM), its spec and measured bandwidth with their sources, its peak
FLOP/s, and the host RAM that spilled layers would use.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from advisor.core.catalogue.backend_paths import PRECISION_WORDS, cpu_int8_factor, usable_compute
from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.catalogue.device import Device
from advisor.core.catalogue.names import family_only
from advisor.core.hardware.cpu_device import cpu_device, cpu_peak_flops
from advisor.core.hardware.model import BACKEND_NAMES, GpuInfo, HardwareReport
from advisor.core.infra.units import GB, GiB

DEFAULT_RAM_BANDWIDTH_BYTES_PER_S = 50e9  # a dual-channel DDR4/DDR5 desktop, when nothing is known
GPU_BACKENDS = ("cuda", "metal", "rocm", "vulkan", "sycl")
# how llama.cpp is built with each backend (its CMake options)
CMAKE_FLAGS = {
    "cuda": "-DGGML_CUDA=on",
    "metal": "-DGGML_METAL=on",
    "rocm": "-DGGML_HIP=on",
    "vulkan": "-DGGML_VULKAN=on",
    "sycl": "-DGGML_SYCL=on",
}


@dataclass(frozen=True)
class Host:
    """The computer a GPU sits in: its RAM (where a hybrid placement keeps weights), that RAM's
    bandwidth and what the figure rests on, the link to the card, and the CPU that multiplies
    the weights kept in RAM. An upgrade is a card in *this* computer: projections keep the
    user's host unless they choose another."""

    ram_bytes: float
    ram_bandwidth_bytes_per_s: float
    label: str = "system RAM"
    # "measured" (the app's probe: a read stream), "rated" (the modules' speed x channels, or
    # the figure a user typed for their memory), "assumed" (nothing known)
    bandwidth_basis: str = "rated"
    ram_description: str = ""  # "DDR5-4800, 2 channels" where known
    pcie_gen: int | None = None  # the link a card in this computer gets, where detected
    pcie_lanes: int | None = None
    link_gbs: float | None = None  # a host-to-device rate the user gave, GB/s
    cpu_id: str | None = None  # the catalogue record of this computer's CPU, where known
    # its usable peak for quantised weights (int8 dot products), where the CPU is known: the
    # rate the CPU multiplies the weights kept in RAM at
    cpu_peak_flops_per_s: float | None = None

    @property
    def link_basis(self) -> str:
        """'given', 'detected' or 'assumed': what the host link figure rests on."""
        if self.link_gbs:
            return "given"
        return "detected" if self.pcie_gen and self.pcie_lanes else "assumed"


def host_from_report(report: HardwareReport | None, fallback_ram_bytes: float) -> Host:
    """The host for projections, from this machine's detection: its RAM size; its bandwidth as
    the app's probe measured it, else the modules' rated figure, else an assumed dual-channel
    desktop; the PCIe link its first card negotiated; its CPU. The one answer for the CLI and
    the app."""
    if report is None:
        return Host(fallback_ram_bytes, DEFAULT_RAM_BANDWIDTH_BYTES_PER_S,
                    bandwidth_basis="assumed")  # fmt: skip
    ram = report.ram
    if ram.measured_bandwidth_bytes_per_s:
        bandwidth, basis = ram.measured_bandwidth_bytes_per_s, "measured"
    elif ram.theoretical_bandwidth_bytes_per_s:
        bandwidth, basis = ram.theoretical_bandwidth_bytes_per_s, "rated"
    else:
        bandwidth, basis = DEFAULT_RAM_BANDWIDTH_BYTES_PER_S, "assumed"
    card = next((g for g in report.gpus if g.pcie_gen and g.pcie_lanes), None)
    return Host(
        float(ram.total_bytes or fallback_ram_bytes), float(bandwidth), bandwidth_basis=basis,
        ram_description=_ram_words(report), pcie_gen=card.pcie_gen if card else None,
        pcie_lanes=card.pcie_lanes if card else None, cpu_id=report.cpu.catalogue_id,
    )  # fmt: skip


def _ram_words(report: HardwareReport) -> str:
    """'DDR5-4800, 2 channels' (what is known of it)."""
    ram = report.ram
    words = f"{ram.type}-{ram.speed_mts}" if ram.type and ram.speed_mts else (ram.type or "")
    if ram.channels:
        words += f"{', ' if words else ''}{ram.channels} channel{'s' if ram.channels > 1 else ''}"
    return words


@dataclass(frozen=True)
class MachineProfile:
    """The device the benchmark runs on, and the numbers that explain it."""

    name: str  # "GeForce RTX 4090", "Apple M3 Max (40-core GPU)", "Intel Xeon (2 cores), DDR5"
    device: Device  # a catalogue record, or one made for this CPU
    backend: str  # "cuda", "metal", "cpu" ...
    catalogue_id: str | None
    spec_bandwidth_bytes_per_s: float | None
    spec_bandwidth_source: str
    measured_bandwidth_bytes_per_s: float | None
    peak_flops_per_s: float | None
    peak_flops_source: str
    host: Host
    notes: tuple[str, ...] = field(default=())
    # a detected GPU whose name fits several catalogued variants: the ids to ask the user about
    variants: tuple[str, ...] = ()
    # the backends the installed llama.cpp has, lower case ("cpu", "cuda"); () where unknown
    llama_backends: tuple[str, ...] = ()
    # a GPU in this machine the installed llama.cpp cannot use (a CPU-only build): its id
    unused_gpu_id: str | None = None

    def not_measurable_here(self) -> str | None:
        """Why a benchmark here would not measure this device, in one sentence: a device
        chosen by hand whose backend the installed llama.cpp lacks would have its name put on
        a run of this computer's own hardware. None where a run measures it (or the build is
        unknown)."""
        if not self.llama_backends or self.backend in self.llama_backends:
            return None
        return (
            f"The installed llama.cpp has no {BACKEND_NAMES.get(self.backend, self.backend)} "
            f"backend, so a benchmark here would measure this computer's own hardware, not "
            f"the {self.name}: install a build with it (see the README), or choose 'Use the "
            "detected one' on the Machine page."
        )

    def compute_peak(self, quantized: bool) -> tuple[float | None, str]:
        """The compute roof a model's prefill is measured against, with where it comes from:
        the peak of the precision llama.cpp's kernels run in on this device and backend (the
        backend-path table), the figure the run's ceiling and every prediction use. Where the
        table has no figure for the device, the profile's own estimate."""
        usable = usable_compute(self.device, self.backend, quantized)
        if usable.flops_per_s and usable.rule is not None:
            words = f"{PRECISION_WORDS.get(usable.precision, usable.precision)} peak"
            wanted = usable.rule.precision[0]
            if wanted != usable.precision:
                words += (
                    ", the figure prefill is counted against: none is published for the "
                    f"{PRECISION_WORDS.get(wanted, wanted)} llama.cpp uses"
                )
            factor = cpu_int8_factor(self.device)
            if self.device.is_cpu and usable.precision == "fp32_tflops":
                words += f"; {self.peak_flops_source}"
            elif factor and usable.precision == "int8_dot_tops":
                words += (
                    f"; estimate: {factor[0]:g} x the FP32 peak ({factor[1]}'s int8 multiply-adds "
                    f"run at {factor[0]:g}x its FP32 rate); FP32: "
                    f"{self.peak_flops_source.removeprefix('estimate: ')}"
                )
            elif usable.estimate:
                words += "; estimate"
            return usable.flops_per_s, words
        return self.peak_flops_per_s, self.peak_flops_source

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return (
            self.spec_bandwidth_bytes_per_s
            or self.measured_bandwidth_bytes_per_s
            or DEFAULT_RAM_BANDWIDTH_BYTES_PER_S
        )

    @property
    def bandwidth_source(self) -> str:
        """Where the bandwidth the ceilings use comes from, in words."""
        if self.spec_bandwidth_bytes_per_s:
            return self.spec_bandwidth_source
        if self.measured_bandwidth_bytes_per_s:
            return (
                "measured on this machine (the memory speed is not readable without admin rights)"
            )
        return "assumed: neither the memory speed nor a measurement is available"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["device"] = self.device.to_json()
        d["bandwidth_bytes_per_s"] = self.bandwidth_bytes_per_s
        return d


def build_profile(
    report: HardwareReport, catalogue: Catalogue, *, chosen_device_id: str | None = None
) -> MachineProfile:
    """The machine profile from detection, the catalogue and (optionally) the user's choice."""
    backends = {b.lower() for b in (report.backend.backends if report.backend else ())}
    gpu_backend = next((b for b in GPU_BACKENDS if b in backends), None)
    host = host_from_report(report, 16 * GiB)
    chosen = catalogue.by_id(chosen_device_id) if chosen_device_id else None
    gpu, gpu_seen = _detected_gpu(report, catalogue)
    notes: list[str] = []
    variants = () if gpu is not None or chosen is not None else _gpu_variants(report, catalogue)
    if variants:
        notes.append(
            f"Your GPU's name fits {len(variants)} catalogued variants that differ in bandwidth "
            "or compute; choose yours below so the numbers use the right one."
        )
    if chosen is not None and not chosen.is_cpu:
        gpu = chosen
        notes.append(f"Device chosen by hand: {chosen.name}.")
    known = report.backend is not None and report.backend.available
    installed = tuple(sorted(backends | {"cpu"})) if known else ()
    if gpu is not None and (gpu_backend or chosen is not None or gpu.device_class == "apple_soc"):
        profile = replace(
            _gpu_profile(report, gpu, gpu_seen, backends, chosen, host, notes),
            llama_backends=installed,
        )
        reason = profile.not_measurable_here()
        return replace(profile, notes=(*profile.notes, reason)) if reason else profile
    if gpu is not None and known:
        backend = gpu.usual_backend
        flag = CMAKE_FLAGS.get(backend, "-DGGML_VULKAN=on")
        notes.append(
            f"Your {gpu.name} is not used: the installed llama.cpp has no "
            f"{BACKEND_NAMES.get(backend, backend)} backend (a CPU-only build), so the numbers "
            "here are the CPU's. To measure the card, reinstall llama-cpp-python with "
            f'CMAKE_ARGS="{flag}" and --force-reinstall --no-cache-dir (the README has the '
            "command)."
        )
    profile = _cpu_profile(report, catalogue, chosen, host, notes)
    unused = gpu.id if gpu is not None and known else None
    return replace(profile, variants=variants, llama_backends=installed, unused_gpu_id=unused)


def _detected_gpu(
    report: HardwareReport, catalogue: Catalogue
) -> tuple[Device | None, GpuInfo | None]:
    """The first real GPU the catalogue knows, and what the driver said about it."""
    for g in report.gpus:
        if g.is_virtual:
            continue
        d = catalogue.by_id(g.catalogue_id) if g.catalogue_id else catalogue.try_resolve(g.name)
        if d is not None and not d.is_cpu:
            return d, g
    return None, None


def _gpu_variants(report: HardwareReport, catalogue: Catalogue) -> tuple[str, ...]:
    """The catalogued variants a detected GPU's name fits, when it fits several."""
    for g in report.gpus:
        if g.is_virtual or g.catalogue_id:
            continue
        name = g.name if not g.gpu_cores else f"{g.name} {g.gpu_cores}-core GPU"
        found = [d for d in catalogue.candidates(name) if not d.is_cpu]
        if len(found) > 1:
            return tuple(d.id for d in found[:8])
    return ()


def _gpu_profile(
    report: HardwareReport,
    gpu: Device,
    gpu_seen: GpuInfo | None,
    installed: set[str],
    chosen: Device | None,
    host: Host,
    notes: list[str],
) -> MachineProfile:
    # the first installed GPU backend the device runs (CUDA on an Apple chip, Metal on a
    # GeForce: none of its numbers would exist), else a build with its usual one
    runs = [b for b in GPU_BACKENDS if b in installed and b in gpu.backends]
    backend = runs[0] if runs else gpu.usual_backend
    other = next((b for b in GPU_BACKENDS if b in installed), None)
    if not runs and other:
        notes.append(
            f"The installed llama.cpp runs {BACKEND_NAMES.get(other, other)}, which the "
            f"{gpu.name} does not; the numbers assume a build with "
            f"{BACKEND_NAMES.get(backend, backend)}."
        )
    elif not runs and chosen is None:
        notes.append(
            f"The installed llama.cpp has no GPU backend, so the {gpu.name} is "
            "not used; the projection assumes a build with "
            f"{gpu.usual_backend}."
        )
    source = "; ".join(s["url"] for s in gpu.sources[:1])
    if gpu_seen and gpu_seen.bandwidth_bytes_per_s and not gpu.unified_memory:
        notes.append(
            f"The driver reports {gpu_seen.bandwidth_bytes_per_s / GB:.0f} GB/s for "
            f"this card; the catalogue's vendor figure is {gpu.memory_bandwidth_gbs:.0f}."
        )
    measured = report.ram.measured_bandwidth_bytes_per_s
    return MachineProfile(
        name=gpu.name,
        device=gpu,
        backend=backend,
        catalogue_id=gpu.id,
        spec_bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
        spec_bandwidth_source=f"vendor figure ({source})",
        measured_bandwidth_bytes_per_s=measured if gpu.unified_memory else None,
        peak_flops_per_s=gpu.peak_flops_per_s,
        peak_flops_source=(
            "dense FP16 tensor peak"
            if gpu.fp16_tensor_tflops
            else "FP32 peak (estimate)"
            if gpu.fp32_tflops_is_estimate
            else "FP32 peak"
        ),
        host=host,
        notes=tuple(notes),
    )


def _cpu_profile(
    report: HardwareReport,
    catalogue: Catalogue,
    chosen: Device | None,
    host: Host,
    notes: list[str],
) -> MachineProfile:
    """CPU inference: the CPU and this machine's RAM."""
    cpu, ram = report.cpu, report.ram
    measured = ram.measured_bandwidth_bytes_per_s
    matched = (
        chosen
        if (chosen is not None and chosen.is_cpu)
        else (
            catalogue.by_id(cpu.catalogue_id)
            if cpu.catalogue_id
            else (catalogue.try_resolve(cpu.model) if cpu.model else None)
        )
    )
    if matched is not None and not matched.is_cpu:
        matched = None
    spec: float | None
    if ram.theoretical_bandwidth_bytes_per_s:
        spec = ram.theoretical_bandwidth_bytes_per_s
        spec_source = ram.theoretical_bandwidth_source or "memory modules"
    elif matched is not None:
        spec = matched.bandwidth_bytes_per_s
        spec_source = (
            f"catalogue: {matched.name} at its highest supported memory speed "
            "(your modules may be slower)"
        )
    else:
        spec, spec_source = None, "memory speed not readable without admin rights"
    if spec is None and measured is None:
        notes.append(
            "Neither the memory speed nor a measured bandwidth is known; assuming "
            f"{DEFAULT_RAM_BANDWIDTH_BYTES_PER_S / GB:.0f} GB/s."
        )
    peak, peak_source = (
        (matched.peak_flops_per_s, "catalogue FP32 estimate")
        if (matched is not None and matched.peak_flops_per_s)
        else cpu_peak_flops(cpu)
    )
    bandwidth = spec or measured or DEFAULT_RAM_BANDWIDTH_BYTES_PER_S
    device = cpu_device(cpu, ram, bandwidth, peak, matched)
    cores = cpu.physical_cores or cpu.logical_cores
    return MachineProfile(
        name=device.name + (f" ({cores} cores)" if cores else ""),
        device=device,
        backend="cpu",
        catalogue_id=matched.id if matched else None,
        spec_bandwidth_bytes_per_s=spec,
        spec_bandwidth_source=spec_source,
        measured_bandwidth_bytes_per_s=measured,
        peak_flops_per_s=peak,
        peak_flops_source=peak_source,
        host=host,
        notes=tuple(notes),
    )


def board_name(machine: str | None) -> str | None:
    """A machine name without the board revision ('Raspberry Pi 5 Model B Rev 1.1' ->
    'Raspberry Pi 5 Model B'): one record covers every revision of a board."""
    if not machine:
        return None
    return re.sub(r"\s+Rev(ision)?\s*[\w.]+$", "", machine.strip(), flags=re.IGNORECASE)


def match_catalogue(report: HardwareReport, catalogue: Catalogue) -> HardwareReport:
    """Fill catalogue_id on the CPU and every GPU the catalogue knows."""
    cpu = report.cpu
    if not cpu.catalogue_id:
        # the CPU's own name; else the machine's (an Arm board's CPU is named only by its
        # cores, 'ARM Cortex-A76', and its board, 'Raspberry Pi 5 Model B Rev 1.0', says
        # which chip and memory it has)
        for name in (cpu.model, board_name(report.machine)):
            d = catalogue.try_resolve(name) if name else None
            if d is not None and d.is_cpu:
                cpu = replace(cpu, catalogue_id=d.id)
                break
    gpus = []
    for g in report.gpus:
        if g.catalogue_id or g.is_virtual:
            gpus.append(g)
            continue
        name = g.name
        if g.gpu_cores and "core" not in name.lower():
            name = f"{name} {g.gpu_cores}-core GPU"
        d = catalogue.try_resolve(name)
        if d is None and g.vram_total_bytes:
            d = catalogue.try_resolve(f"{g.name} {round(g.vram_total_bytes / 1024**3)}GB")
        if d is None and g.pci_id:
            d = next((x for x in catalogue if g.pci_id.lower() in x.pci_device_ids), None)
        if d is None and family_only(g.name) and cpu.catalogue_id:
            # 'AMD Radeon(TM) Graphics' names no device; the CPU's chip says which iGPU it
            # is, where the chip has exactly one catalogued
            chip = catalogue.by_id(cpu.catalogue_id)
            own = catalogue.chip_gpus(chip) if chip is not None else []
            d = own[0] if len(own) == 1 else None
        gpus.append(replace(g, catalogue_id=d.id) if d is not None and not d.is_cpu else g)
    return replace(report, cpu=cpu, gpus=tuple(gpus))
