"""Shared fixtures for the traffic-import tests."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    """The folder of hand-written files in each format."""
    return FIXTURES
