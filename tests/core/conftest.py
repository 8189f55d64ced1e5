"""Fixtures the core's projection tests share: the shipped catalogue and Mistral NeMo 12B
Q4_K_M (the seed article's model)."""

from __future__ import annotations

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


@pytest.fixture(scope="module")
def nemo():
    return facts_from_shape(get_shape("mistral-nemo-12b"), "q4_k_m")
