"""The installed package has every sub-package, and the catalogue and resources inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[1]


def test_every_package_under_advisor_is_listed_for_installation():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "advisor").rglob("__init__.py")
    }
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"
    assert {"advisor.device_db", "advisor.resources"} <= listed
    assert config["package-dir"] == {
        "advisor.device_db": "device_db",
        "advisor.resources": "resources",
    }


def test_the_catalogue_and_resources_load_from_the_package():
    from importlib import resources

    devices = resources.files("advisor.device_db").joinpath("devices")
    assert len([p for p in devices.iterdir() if p.name.endswith(".json")]) >= 5
    data = resources.files("advisor.resources").joinpath("data")
    assert data.joinpath("model_shapes.json").is_file()
    assert data.joinpath("llamacpp_calibration.csv").is_file()
