"""The vocabularies the parsers map onto: PCI vendors, CPU features as llama.cpp names them,
CPU vendors, ARM implementers and parts, SMBIOS memory types."""

from __future__ import annotations

KiB = 1024
MiB = 1024**2
GiB = 1024**3

# Cells that mean "no value" in nvidia-smi, rocm-smi, dmidecode and CIM output.
MISSING = {
    "",
    "n/a",
    "[n/a]",
    "na",
    "none",
    "unknown",
    "not specified",
    "not provided",
    "[not supported]",
    "not supported",
    "[requested functionality has been deprecated]",
    "requested functionality has been deprecated",
    "[unknown error]",
    "[insufficient permissions]",
    "no module installed",
    "not installed",
    "empty",
}

# Win32_VideoController.AdapterRAM is a uint32: any card with 4 GiB or more reads just below
# 4 GiB (4293918720 = 4095 MiB is what drivers write). Values at or above this are a floor.
ADAPTER_RAM_SATURATED = 4293918720

# PCI vendor ids of real GPU makers, and of emulated or paravirtual display adapters.
PCI_VENDORS = {
    "10de": "NVIDIA",
    "1002": "AMD",
    "1022": "AMD",
    "8086": "Intel",
    "106b": "Apple",
    "5143": "Qualcomm",
    "1a03": "ASPEED",
    "102b": "Matrox",
}
VIRTUAL_PCI_VENDORS = {
    "1af4": "virtio",
    "1b36": "QEMU QXL",
    "15ad": "VMware",
    "1234": "QEMU/Bochs",
    "1414": "Microsoft Hyper-V",
    "80ee": "VirtualBox",
    "1013": "Cirrus Logic (emulated)",
}
# Server boards carry a BMC display chip; it is a real device but never an LLM accelerator.
BMC_PCI_VENDORS = {"1a03", "102b"}

# Features that matter to llama.cpp, in the order they are reported.
FEATURE_ORDER = (
    "SSE3",
    "SSSE3",
    "SSE4_1",
    "SSE4_2",
    "AVX",
    "AVX2",
    "FMA",
    "F16C",
    "BMI2",
    "AVX_VNNI",
    "AVX512F",
    "AVX512CD",
    "AVX512DQ",
    "AVX512BW",
    "AVX512VL",
    "AVX512_VBMI",
    "AVX512_VNNI",
    "AVX512_BF16",
    "AVX512_FP16",
    "AMX_TILE",
    "AMX_INT8",
    "AMX_BF16",
    "NEON",
    "FP16",
    "DOTPROD",
    "I8MM",
    "BF16",
    "SVE",
    "SVE2",
    "SME",
)
# Keys are flag names upper-cased with '_' and '.' removed, so Linux flags (avx512_vnni),
# macOS sysctl words (SSE4.2, AVX512VNNI, FEAT_DotProd) and numpy's names (FMA3, ASIMDDP)
# all land on one vocabulary.
FEATURE_ALIASES = {
    "PNI": "SSE3",
    "SSE3": "SSE3",
    "SSSE3": "SSSE3",
    "SUPPLEMENTALSSE3": "SSSE3",
    "SSE41": "SSE4_1",
    "SSE42": "SSE4_2",
    "AVX": "AVX",
    "AVX10": "AVX",  # macOS sysctl hw.optional.avx1_0 (the Intel AVX10 ISA never reaches here)
    "AVX2": "AVX2",
    "AVX20": "AVX2",  # macOS hw.optional.avx2_0
    "FMA": "FMA",
    "FMA3": "FMA",
    "F16C": "F16C",
    "BMI2": "BMI2",
    "AVXVNNI": "AVX_VNNI",
    "AVX512F": "AVX512F",
    "AVX512CD": "AVX512CD",
    "AVX512DQ": "AVX512DQ",
    "AVX512BW": "AVX512BW",
    "AVX512VL": "AVX512VL",
    "AVX512VBMI": "AVX512_VBMI",
    "AVX512VNNI": "AVX512_VNNI",
    "AVX512BF16": "AVX512_BF16",
    "AVX512FP16": "AVX512_FP16",
    "AMXTILE": "AMX_TILE",
    "AMXINT8": "AMX_INT8",
    "AMXBF16": "AMX_BF16",
    "ASIMD": "NEON",
    "NEON": "NEON",
    "ASIMDHP": "FP16",
    "FEATFP16": "FP16",
    "FP16": "FP16",
    "ASIMDDP": "DOTPROD",
    "FEATDOTPROD": "DOTPROD",
    "I8MM": "I8MM",
    "FEATI8MM": "I8MM",
    "BF16": "BF16",
    "FEATBF16": "BF16",
    "SVE": "SVE",
    "FEATSVE": "SVE",
    "SVE2": "SVE2",
    "FEATSVE2": "SVE2",
    "SME": "SME",
    "FEATSME": "SME",
}

CPU_VENDORS = {
    "genuineintel": "Intel",
    "authenticamd": "AMD",
    "hygongenuine": "Hygon",
    "centaurhauls": "Centaur",
    "arm": "ARM",
    "apple": "Apple",
    "cavium": "Cavium",
    "qualcomm": "Qualcomm",
    "ampere": "Ampere",
    "hisilicon": "HiSilicon",
    "intel": "Intel",
    "amd": "AMD",
}

# /proc/cpuinfo on ARM names no product: only 'CPU implementer' and 'CPU part' ids
# (Linux arch/arm64/include/asm/cputype.h).
ARM_IMPLEMENTERS = {
    0x41: "ARM",
    0x42: "Broadcom",
    0x43: "Cavium",
    0x46: "Fujitsu",
    0x48: "HiSilicon",
    0x4E: "NVIDIA",
    0x50: "APM",
    0x51: "Qualcomm",
    0x61: "Apple",
    0x69: "Intel",
    0xC0: "Ampere",
}
ARM_PARTS = {
    (0x41, 0xD03): "Cortex-A53",
    (0x41, 0xD04): "Cortex-A35",
    (0x41, 0xD05): "Cortex-A55",
    (0x41, 0xD07): "Cortex-A57",
    (0x41, 0xD08): "Cortex-A72",
    (0x41, 0xD09): "Cortex-A73",
    (0x41, 0xD0A): "Cortex-A75",
    (0x41, 0xD0B): "Cortex-A76",
    (0x41, 0xD0C): "Neoverse-N1",
    (0x41, 0xD0D): "Cortex-A77",
    (0x41, 0xD40): "Neoverse-V1",
    (0x41, 0xD41): "Cortex-A78",
    (0x41, 0xD49): "Neoverse-N2",
    (0x41, 0xD4F): "Neoverse-V2",
    (0x43, 0x0A1): "ThunderX CN88XX",
    (0x43, 0x0A2): "ThunderX CN81XX",
    (0x43, 0x0A3): "ThunderX CN83XX",
    (0x43, 0x0AF): "ThunderX2 CN99XX",
    (0x48, 0xD01): "Kunpeng 920 (TSV110)",
    (0x50, 0x000): "X-Gene",
    (0xC0, 0xAC3): "Ampere-1",
}

# SMBIOS type 17 memory type codes, as Win32_PhysicalMemory.SMBIOSMemoryType reports them.
SMBIOS_MEMORY_TYPES = {
    18: "DDR",
    19: "DDR2",
    20: "DDR",
    21: "DDR2",
    22: "DDR2 FB-DIMM",
    24: "DDR3",
    26: "DDR4",
    27: "LPDDR",
    28: "LPDDR2",
    29: "LPDDR3",
    30: "LPDDR4",
    32: "HBM",
    33: "HBM2",
    34: "DDR5",
    35: "LPDDR5",
    36: "HBM3",
}
