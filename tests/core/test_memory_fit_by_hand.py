"""Usable memory, the memory option and fits / partial / no at every edge, each figure worked
out here: a card keeps 1 GiB for its driver, Apple's GPU gets about 2/3 of a memory under
36 GB and 3/4 from 36 GB (Metal's recommendedMaxWorkingSetSize), other unified machines keep
4 GiB for the OS, and what spills is read from RAM (a card) or the CPU side of the memory."""

from __future__ import annotations

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.predict.physics.memory import fit_on, memory_option, usable_memory_bytes

HOST = Host(ram_bytes=64 * GiB, ram_bandwidth_bytes_per_s=80e9, label="system RAM")


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


@pytest.fixture(scope="module")
def apple36(cat):
    return next(d for d in cat.devices if d.device_class == "apple_soc" and 36 in d.memory_sizes_gb)


@pytest.fixture(scope="module")
def strix(cat):
    return cat.by_id("amd-radeon-8060s-ryzen-ai-max-plus-395")  # unified, not Apple


def test_usable_memory_by_kind(cat, apple36, strix):
    assert usable_memory_bytes(cat.by_id("nvidia-geforce-rtx-4090"), 24) == 23 * GiB
    assert usable_memory_bytes(strix, 128) == 124 * GiB
    assert usable_memory_bytes(apple36, 36) == pytest.approx(0.75 * 36 * GiB)  # 36: large
    assert usable_memory_bytes(apple36, 35) == pytest.approx(0.67 * 35 * GiB)
    assert usable_memory_bytes(apple36, 18) == pytest.approx(0.67 * 18 * GiB)


def test_memory_option_choice_else_smallest_that_fits_else_largest(cat):
    ti = cat.by_id("nvidia-geforce-rtx-4060-ti")  # 8 or 16 GB
    assert memory_option(ti, 100 * GiB, 1, 8.0) == 8.0  # the user's choice stands
    assert memory_option(ti, 7 * GiB, 1, None) == 8.0  # exactly the usable 7 GiB of 8
    assert memory_option(ti, 7 * GiB + 1, 1, None) == 16.0
    assert memory_option(ti, 14 * GiB, 2, None) == 8.0  # two 8 GB cards: 2 x 7 GiB
    assert memory_option(ti, 40 * GiB, 1, None) == 16.0  # fits none: the largest


def test_a_card_partial_share_spill_speed_and_room(cat):
    rtx = cat.by_id("nvidia-geforce-rtx-4090")
    fit = fit_on(rtx, 1, 23 * GiB, 24, HOST)
    assert (fit.fits, fit.share_on_device) == ("yes", 1.0)
    assert fit.spill_bandwidth_bytes_per_s == rtx.bandwidth_bytes_per_s
    # 46 GiB: half on the card, half (23 GiB) read from 80 GB/s RAM
    half = fit_on(rtx, 1, 46 * GiB, 24, HOST)
    assert half.fits == "partial" and half.share_on_device == pytest.approx(0.5)
    assert half.spill_bandwidth_bytes_per_s == 80e9 and half.spill_label == "system RAM"
    assert half.note.startswith("Partial offload: 50% of the model (23.0 GiB) does not fit")
    assert "system RAM at 80 GB/s" in half.note
    # room: 23 GiB on the card + 64 - 4 GiB of RAM = 83 GiB, exactly: still partial
    assert fit_on(rtx, 1, 83 * GiB, 24, HOST).fits == "partial"
    no = fit_on(rtx, 1, 83 * GiB + 1, 24, HOST)
    assert no.fits == "no" and no.share_on_device == 0.0
    assert "plus 64 GiB of system RAM is not enough" in no.note and "83.0 GiB" in no.note
    # two cards: 46 GiB on cards + 60 GiB of RAM
    assert fit_on(rtx, 2, 46 * GiB, 24, HOST).fits == "yes"
    two = fit_on(rtx, 2, 107 * GiB, 24, HOST)
    assert two.fits == "no" and "2 x 24 GiB" in two.note
    # a host with less RAM than the OS keeps leaves no room beyond the card, not even a byte
    tiny = Host(ram_bytes=2 * GiB, ram_bandwidth_bytes_per_s=20e9)
    assert fit_on(rtx, 1, 23 * GiB + 0.05, 24, tiny).fits == "no"
    # a small card under a big model: most of it runs from RAM, the share says how little
    big_host = Host(ram_bytes=128 * GiB, ram_bandwidth_bytes_per_s=80e9)
    small = fit_on(cat.by_id("nvidia-geforce-rtx-4060"), 1, 80 * GiB, 8, big_host)
    assert small.fits == "partial" and small.share_on_device == pytest.approx(7 / 80)
    assert small.note.startswith("Partial offload: 91% of the model (73.0 GiB) does not fit")


def test_unified_memory_spills_to_its_cpu_side_at_half_speed(strix, apple36):
    # 128 GiB Strix Halo: the GPU is given 124 GiB; the CPU side can hold up to the same
    # 124 GiB (all memory less the OS), so past usable it is "no" at once
    over = fit_on(strix, 1, 124 * GiB + 1, 128, HOST)
    assert over.fits == "no" and over.spill_bandwidth_bytes_per_s == strix.bandwidth_bytes_per_s / 2
    assert "needs 124.0 GiB; the largest" in over.note and "has 128 GiB, of which" in over.note
    # two of them: 2 x 124 GiB for the GPU, 2 x 128 - 4 GiB in all
    two = fit_on(strix, 2, 250 * GiB, 128, HOST)
    assert two.fits == "partial" and two.share_on_device == pytest.approx(248 / 250)
    assert fit_on(strix, 2, 252 * GiB + 1, 128, HOST).fits == "no"
    chosen = fit_on(strix, 1, 200 * GiB, 128, HOST, memory_chosen=True)
    assert "the chosen" in chosen.note
    # Apple 36 GB: the GPU gets 27 GiB; up to 32 GiB (36 - 4 for the OS) runs partly on the
    # CPU side at half the bandwidth
    part = fit_on(apple36, 1, 30 * GiB, 36, HOST)
    assert part.fits == "partial" and part.share_on_device == pytest.approx(27 / 30)
    assert part.spill_bandwidth_bytes_per_s == pytest.approx(apple36.bandwidth_bytes_per_s / 2)
    assert part.spill_label == "the CPU side of the same memory"
    assert fit_on(apple36, 1, 32 * GiB, 36, HOST).fits == "partial"
    assert fit_on(apple36, 1, 32 * GiB + 1, 36, HOST).fits == "no"
