"""Device names as people and drivers write them, folded to comparable keys.

Case- and punctuation-insensitive, trademarks dropped, with or without the vendor words
("NVIDIA GeForce RTX 4090", "RTX 4090"), a memory-size suffix ("GeForce RTX 4090 24GB") and
Apple's GPU-core counts ("Apple M2 Max 38-core GPU", "M2 Max (38-core GPU)").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TRADEMARKS = re.compile(r"\((?:r|tm|c)\)|[®™©]", re.IGNORECASE)
_CORES = re.compile(r"(\d+)\s*-?\s*core\s*gpu|(\d+)\s*-?\s*core(?=\s*(?:\)|,|$))", re.IGNORECASE)
_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b", re.IGNORECASE)
_PAREN = re.compile(r"\(([^)]*)\)")
# compiled once: the catalogue folds about 5,000 names when it loads (at the app's start)
_PUNCTUATION = re.compile(r"[^a-z0-9.+]+")
_LONE_DOT = re.compile(r"(?<![0-9])\.|\.(?![0-9])")
_NUMBER_APART = re.compile(r"(?<=[a-z])(?=[0-9]{2})|(?<=[0-9]{2})(?=[a-z])")
_WITH = re.compile(r"\bwith\b")
_VENDOR_WORDS = {
    "nvidia",
    "geforce",
    "amd",
    "ati",
    "intel",
    "apple",
    "corporation",
    "graphics",
    "tesla",
    "the",
}


def basic_key(text: str) -> str:
    """Lower case, trademarks removed, punctuation folded to single spaces, model numbers
    apart ("RTX-4090", "rtx4090" and "RTX 4090" are all "rtx 4090"; "5070Ti" is "5070 ti")."""
    text = _TRADEMARKS.sub(" ", text.lower())
    text = _PUNCTUATION.sub(" ", text)
    text = _LONE_DOT.sub(" ", text)
    # a model number stands apart from the letters around it ("rtx4090", "5070ti"), while a
    # single digit stays with its letters ("sxm5", "m4", "x3d": one word, as people say them)
    text = _NUMBER_APART.sub(" ", text)
    return " ".join(text.split())


# words that name a family of GPUs, never one: a driver's generic name for an integrated GPU
# ('AMD Radeon(TM) Graphics', 'Intel(R) Arc(TM) Graphics', 'Intel(R) UHD Graphics') is made
# of these and vendor words alone, and means no device in particular
_FAMILY_WORDS = {
    "radeon", "arc", "iris", "xe", "uhd", "hd", "quadro", "instinct", "rtx", "gtx", "gpu",
    "integrated", "igpu", "series", "pro", "ryzen",
}  # fmt: skip


def family_only(key: str) -> bool:
    """Is this name made only of vendor and family words ('AMD Radeon(TM) Graphics')?"""
    words = basic_key(key).split()
    return bool(words) and all(w in _FAMILY_WORDS or w in _VENDOR_WORDS for w in words)


def strip_vendor(key: str) -> str:
    words = [w for w in key.split() if w not in _VENDOR_WORDS]
    return " ".join(words)


@dataclass(frozen=True)
class Query:
    base: str  # without vendor words, memory and core counts
    memory_gb: float | None
    gpu_cores: int | None


_FORM_FACTORS = {"pcie", "sxm", "sxm2", "sxm4", "sxm5", "nvl", "laptop", "mobile", "max-q"}


def parse_name(name: str) -> Query:
    text = name
    cores: int | None = None
    memory: float | None = None
    for m in _CORES.finditer(text):
        cores = int(m.group(1) or m.group(2))
    text = _CORES.sub(" ", text)
    for m in _MEMORY.finditer(text):
        memory = float(m.group(1))
    text = _MEMORY.sub(" ", text)

    # what is left in parentheses is a qualifier ("form factor not stated"), not part of the
    # name, except a form factor ("(PCIe per one copy)")
    def keep_form_factor(m: re.Match[str]) -> str:
        return " " + " ".join(w for w in basic_key(m.group(1)).split() if w in _FORM_FACTORS) + " "

    text = _PAREN.sub(keep_form_factor, text)
    base = strip_vendor(basic_key(text))
    base = _WITH.sub(" ", base)
    return Query(" ".join(base.split()), memory, cores)


# -------------------------------------------------------------------------------------------
# the catalogue
