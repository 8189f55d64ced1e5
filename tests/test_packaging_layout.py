"""The installed package has every sub-package, and the catalogue and resources inside it."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_the_catalogue_and_resources_are_found_in_the_source_tree():
    from advisor.core.infra.paths import bundled

    assert len(list((bundled("device_db") / "devices").glob("*.json"))) >= 5
    assert (bundled("resources") / "data" / "model_shapes.json").is_file()


def test_the_installed_package_carries_them(tmp_path):
    """From a folder without the source tree, Python imports the installed package: the
    catalogue and the resources must be inside it (what `pip install .` and the frozen app
    rely on)."""
    code = (
        "import pathlib; from importlib import resources\n"
        "d = pathlib.Path(str(resources.files('advisor.device_db')))\n"
        "r = pathlib.Path(str(resources.files('advisor.resources')))\n"
        "print(len(list((d / 'devices').glob('*.json'))), (r / 'data' / 'model_shapes.json')"
        ".is_file(), (d / 'backend_paths.json').is_file())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    count, shapes, paths = out.stdout.split()
    assert int(count) >= 5 and shapes == "True" and paths == "True"
