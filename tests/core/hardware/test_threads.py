"""llama-bench's default thread count on recorded core layouts (llama.cpp rule: threads.py).

Each layout names where it comes from. 'Recorded' means copied from a public report or from a
machine; 'spec' means built from the vendor's published core counts with the OS's usual CPU
numbering, because no recording was found; the comment says which.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.core.hardware.probes import CommandResult, FileResult
from advisor.core.hardware.threads import (
    CpuLayout,
    llama_bench_default_threads,
    macos_layout_from_sysctl,
    normalise_arch,
    parse_cpulist,
    probe_cpu_layout,
    probe_linux_layout,
    probe_windows_layout,
)

FIXTURES = Path(__file__).parent / "fixtures"

HYBRID = "common/common.cpp:182-195,208-216"
LINUX_SIBLINGS = "common/common.cpp:88-104"
MACOS_PERFLEVEL0 = "common/common.cpp:108-111"
WINDOWS_CORES = "common/common.cpp:116-143"


def mask(*cpus: int) -> str:
    """A thread_siblings hex mask as the kernel prints it (32-bit groups, comma separated)."""
    bits = sum(1 << c for c in cpus)
    groups = max(1, (max(cpus) // 32) + 1)
    return ",".join(f"{(bits >> (32 * g)) & 0xFFFFFFFF:08x}" for g in reversed(range(groups)))


def linux_layout(core_of_cpu: list[int], e_cores: frozenset[int] = frozenset()) -> CpuLayout:
    """A Linux layout from 'logical CPU n belongs to core core_of_cpu[n]' (lscpu -e CORE)."""
    members: dict[int, list[int]] = {}
    for cpu, core in enumerate(core_of_cpu):
        members.setdefault(core, []).append(cpu)
    siblings = tuple(mask(*members[core]) for core in core_of_cpu)
    return CpuLayout(
        os="linux",
        arch="x86_64",
        logical_cpus=len(core_of_cpu),
        thread_siblings=siblings,
        hybrid=bool(e_cores),
        efficiency_cpus=e_cores,
    )


# i9-13900KF, Linux: FeralInteractive/gamemode issue #498, `lscpu -e` (rows 0-13 verbatim):
# CPU n and n+1 share CORE n//2 up to CPU 15 (P-cores with HT). The rows for CPUs 14-31 were cut
# off in the copy read; they follow Raptor Lake's numbering (spec): E-cores are CPUs 16-31, one
# thread each, CORE 8-23, as lm-sensors issue #486's coretemp list (8 + 16 cores) agrees.
GAMEMODE_498_ROWS = """\
  0    0      0    0 0:0:0:0          yes 5500.0000 800.0000 1100.0551
  1    0      0    0 0:0:0:0          yes 5500.0000 800.0000  800.0000
  2    0      0    1 4:4:1:0          yes 5500.0000 800.0000 1020.2340
  3    0      0    1 4:4:1:0          yes 5500.0000 800.0000 1023.4670
  4    0      0    2 8:8:2:0          yes 5500.0000 800.0000 1100.0000
  5    0      0    2 8:8:2:0          yes 5500.0000 800.0000  800.0000
  6    0      0    3 12:12:3:0        yes 5500.0000 800.0000 1100.0031
  7    0      0    3 12:12:3:0        yes 5500.0000 800.0000  800.0000
  8    0      0    4 16:16:4:0        yes 5800.0000 800.0000  976.1010
  9    0      0    4 16:16:4:0        yes 5800.0000 800.0000  799.0430
 10    0      0    5 20:20:5:0        yes 5800.0000 800.0000 1404.8610
 11    0      0    5 20:20:5:0        yes 5800.0000 800.0000 1502.6730
 12    0      0    6 24:24:6:0        yes 5500.0000 800.0000  801.1090
 13    0      0    6 24:24:6:0        yes 5500.0000 800.0000  800.0000
"""


def i9_13900k() -> CpuLayout:
    recorded = [int(line.split()[3]) for line in GAMEMODE_498_ROWS.splitlines()]
    cores = [*recorded, 7, 7, *range(8, 24)]  # CPUs 14-31 (spec, see above)
    assert recorded == [n // 2 for n in range(14)]
    return linux_layout(cores, e_cores=frozenset(range(16, 32)))


def test_13900k_on_linux_gets_one_thread_per_p_core():
    choice = llama_bench_default_threads(i9_13900k())
    assert choice.threads == 8
    assert choice.source_line.startswith(HYBRID)
    assert "P-core" in choice.rule


def test_13900k_in_a_container_limited_to_p_cores_falls_back_to_all_24_cores():
    # pinning to CPU 16 fails outside the cpuset, so llama.cpp counts every physical core
    layout = i9_13900k()
    pinned = CpuLayout(**{**layout.__dict__, "pinnable_cpus": frozenset(range(16))})
    choice = llama_bench_default_threads(pinned)
    assert choice.threads == 24
    assert choice.source_line.startswith(LINUX_SIBLINGS)


def test_13900k_on_windows_counts_e_cores_too():
    layout = CpuLayout(os="windows", arch="x86_64", logical_cpus=32, physical_cores=24)
    choice = llama_bench_default_threads(layout)
    assert choice.threads == 24
    assert choice.source_line.startswith(WINDOWS_CORES)
    mingw = CpuLayout(**{**layout.__dict__, "mingw_build": True})
    assert llama_bench_default_threads(mingw).threads == 16  # only here: logical / 2


def test_i5_12400_without_e_cores_uses_its_6_physical_cores():
    # spec: 6 cores / 12 threads, no E-cores, so not hybrid; siblings numbered n, n+1
    layout = linux_layout([n // 2 for n in range(12)])
    choice = llama_bench_default_threads(layout)
    assert choice.threads == 6
    assert choice.source_line.startswith(LINUX_SIBLINGS)


def test_ryzen_9_7950x_uses_16_physical_cores():
    # recorded: dmidecode of a 7950X desktop (fixtures/linux, linuxhw/DMI) says 16 / 32;
    # AMD's Linux numbering pairs CPU n with n+16 (a 7840U's thread_siblings_list shows n, n+8
    # in jlobue10/ALLY_Nobara_stuff issue #4)
    dmi = (FIXTURES / "linux/dmidecode-ryzen7950x-2x16-ddr5-4800.txt").read_text()
    cores = int(re.search(r"Core Count: (\d+)", dmi).group(1))
    threads = int(re.search(r"Thread Count: (\d+)", dmi).group(1))
    assert (cores, threads) == (16, 32)
    layout = linux_layout([n % cores for n in range(threads)])
    choice = llama_bench_default_threads(layout)
    assert choice.threads == 16
    assert choice.source_line.startswith(LINUX_SIBLINGS)
    windows = CpuLayout(os="windows", arch="x86_64", logical_cpus=32, physical_cores=16)
    assert llama_bench_default_threads(windows).threads == 16


# M2 Pro: Dr-Noob/cpufetch issue #183, system_profiler on a Mac14,10 (recorded)
CPUFETCH_183 = "      Total Number of Cores: 12 (8 performance and 4 efficiency)"


def test_apple_m2_pro_uses_its_8_performance_cores():
    total, perf, eff = map(int, re.findall(r"\d+", CPUFETCH_183))
    layout = CpuLayout(
        os="darwin",
        arch="arm64",
        logical_cpus=total,
        physical_cores=total,
        performance_cores=perf,
        efficiency_cores=eff,
    )
    choice = llama_bench_default_threads(layout)
    assert choice.threads == 8
    assert choice.source_line.startswith(MACOS_PERFLEVEL0)


def test_apple_m4_max_uses_its_12_performance_cores():
    # spec: the 16-core M4 Max is 12P + 4E (the binned 14-core one is 10P + 4E)
    text = "hw.physicalcpu: 16\nhw.logicalcpu: 16\nhw.perflevel0.physicalcpu: 12\n"
    choice = llama_bench_default_threads(
        macos_layout_from_sysctl(text + "hw.perflevel1.physicalcpu: 4", "arm64")
    )
    assert choice.threads == 12
    assert choice.source_line.startswith(MACOS_PERFLEVEL0)


@pytest.mark.parametrize(
    ("fixture_name", "expected"),
    [
        ("sysctl-perflevels-m5max.txt", 6),  # perflevel0 is 6 'Super' cores, not all 18
        ("sysctl-gh-runner-intel-vm.txt", 4),  # Intel Mac VM: one 'Standard' level of 4
        ("sysctl-gh-runner-m1-virtual.txt", 3),  # Apple VM: one 'Standard' level of 3
    ],
)
def test_recorded_macos_sysctl_through_the_probe(fixture_name, expected):
    text = (FIXTURES / "macos" / fixture_name).read_text()
    choice = llama_bench_default_threads(macos_layout_from_sysctl(text, "arm64"))
    assert choice.threads == expected
    assert choice.source_line.startswith(MACOS_PERFLEVEL0)


def test_macos_before_12_without_perflevels_uses_hw_physicalcpu():
    layout = macos_layout_from_sysctl("hw.logicalcpu: 4\nhw.physicalcpu: 2\n", "x86_64")
    choice = llama_bench_default_threads(layout)
    assert (choice.threads, choice.rule) == (2, "macOS: hw.physicalcpu")


class DictReader:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_text(self, path: str) -> FileResult:
        text = self.files.get(path)
        return FileResult(text, None if text is not None else f"{path} does not exist")

    def glob(self, pattern: str) -> list[str]:
        return []


# Recorded on this project's 2-vCPU KVM build VM (AMD EPYC, 'Hypervisor vendor: KVM'):
# `grep -H . online cpu*/topology/thread_siblings` in /sys/devices/system/cpu
KVM_2_VCPU = """\
online:0-1
cpu0/topology/thread_siblings:1
cpu1/topology/thread_siblings:2
"""


def sysfs_from_grep(text: str) -> dict[str, str]:
    return {
        f"/sys/devices/system/cpu/{path}": value + "\n"
        for path, _, value in (line.partition(":") for line in text.splitlines())
    }


def test_two_vcpu_vm_recorded_through_the_linux_probe():
    layout = probe_linux_layout(DictReader(sysfs_from_grep(KVM_2_VCPU)), "x86_64")
    assert (layout.logical_cpus, layout.physical_cores, layout.hybrid) == (2, 2, False)
    choice = llama_bench_default_threads(layout)
    assert choice.threads == 2
    assert choice.source_line.startswith(LINUX_SIBLINGS)


def test_two_vcpus_that_are_one_core_with_smt_give_one_thread():
    # constructed: a VM whose 2 vCPUs are exposed as hyper-thread siblings of one core
    files = sysfs_from_grep("online:0-1\ncpu0/topology/thread_siblings:3\n")
    files["/sys/devices/system/cpu/cpu1/topology/thread_siblings"] = "3\n"
    layout = probe_linux_layout(DictReader(files), "x86_64")
    assert llama_bench_default_threads(layout).threads == 1


def test_linux_probe_reads_a_hybrid_13900k_sysfs_tree():
    layout = i9_13900k()
    files = {"/sys/devices/system/cpu/online": "0-31\n"}
    for cpu, siblings in enumerate(layout.thread_siblings):
        files[f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings"] = siblings + "\n"
    files["/sys/devices/cpu_core/cpus"] = "0-15\n"
    files["/sys/devices/cpu_atom/cpus"] = "16-31\n"
    probed = probe_linux_layout(DictReader(files), "x86_64")
    assert (probed.performance_cores, probed.efficiency_cores, probed.physical_cores) == (8, 16, 24)
    assert probed.hybrid and probed.efficiency_cpus == frozenset(range(16, 32))
    assert llama_bench_default_threads(probed).threads == 8
    files["/sys/fs/cgroup/cpuset.cpus.effective"] = "0-15\n"  # a P-core-only container
    assert (
        llama_bench_default_threads(probe_linux_layout(DictReader(files), "x86_64")).threads == 24
    )


def test_linux_siblings_stop_at_the_first_missing_cpu_like_llama_cpp():
    files = sysfs_from_grep(KVM_2_VCPU)
    files["/sys/devices/system/cpu/cpu3/topology/thread_siblings"] = "8\n"  # cpu2 offline
    layout = probe_linux_layout(DictReader(files), "x86_64")
    assert layout.thread_siblings == ("1", "2")


# i5-14600K on Windows: SimonvBez/CPUSetSetter issue #3, its RelationProcessorCore list (three
# rows verbatim; the copy read was cut after row 10; the chip has 6 P-cores with SMT and 8
# E-cores, so 14 entries and 20 threads: spec)
CPUSETSETTER_3 = (
    " 0: isSMT: 1, Efficiency: 1, Groups: [(Group: 0, Mask: "
    "0000000000000000000000000000000000000000000000000000000000000011)]\n"
    " 5: isSMT: 1, Efficiency: 1, Groups: [(Group: 0, Mask: "
    "0000000000000000000000000000000000000000000000000000110000000000)]\n"
    " 6: isSMT: 0, Efficiency: 0, Groups: [(Group: 0, Mask: "
    "0000000000000000000000000000000000000000000000000001000000000000)]\n"
)


def test_windows_14600k_counts_every_relation_processor_core():
    rows = CPUSETSETTER_3.splitlines()
    assert "isSMT: 1, Efficiency: 1" in rows[0] and "isSMT: 0, Efficiency: 0" in rows[2]
    layout = probe_windows_layout(lambda logical: 20 if logical else 14, normalise_arch("AMD64"))
    choice = llama_bench_default_threads(layout)
    assert choice.threads == 14
    assert choice.source_line.startswith(WINDOWS_CORES)


@pytest.mark.parametrize(("logical", "expected"), [(32, 16), (4, 4), (3, 3), (0, 4)])
def test_other_systems_use_hardware_concurrency_halved_above_4(logical, expected):
    choice = llama_bench_default_threads(
        CpuLayout(os="other", arch="riscv64", logical_cpus=logical)
    )
    assert choice.threads == expected
    assert choice.source_line.startswith("common/common.cpp:145-146")


def test_power_caps_smt_at_2():
    # constructed: 40 cores with SMT4 (160 logical CPUs) on Linux ppc64le
    layout = linux_layout([n // 4 for n in range(160)])
    power = CpuLayout(**{**layout.__dict__, "arch": "ppc64le"})
    choice = llama_bench_default_threads(power)
    assert choice.threads == 80
    assert choice.source_line.startswith("common/common.cpp:218-225")


def test_cpulist_formats_recorded_in_mangohud_pr_2106():
    assert parse_cpulist("0-1,3,6,8,10\n") == frozenset({0, 1, 3, 6, 8, 10})
    assert parse_cpulist("12-21") == frozenset(range(12, 22))
    assert parse_cpulist("") == frozenset()


class FakeRunner:
    def __init__(self, stdout: str) -> None:
        self.stdout = stdout
        self.args: list[str] = []

    def run(self, args: list[str], timeout_s: float) -> CommandResult:
        self.args = args
        return CommandResult(self.stdout, "", 0, None, 0.01)


def test_probe_dispatches_per_os():
    m5 = (FIXTURES / "macos/sysctl-perflevels-m5max.txt").read_text()
    runner = FakeRunner(m5)
    mac = probe_cpu_layout(platform="darwin", machine="arm64", runner=runner)
    assert runner.args[0] == "sysctl" and "hw.perflevel0.physicalcpu" in runner.args
    assert (mac.os, mac.performance_cores, mac.efficiency_cores) == ("darwin", 6, 12)
    win = probe_cpu_layout(platform="win32", machine="AMD64", cpu_count=lambda lg: 32 if lg else 24)
    assert (win.os, win.arch, win.physical_cores) == ("windows", "x86_64", 24)
    linux = probe_cpu_layout(
        platform="linux", machine="x86_64", reader=DictReader(sysfs_from_grep(KVM_2_VCPU))
    )
    assert linux.os == "linux" and linux.logical_cpus == 2
