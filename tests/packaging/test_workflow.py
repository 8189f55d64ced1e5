"""The CI workflow is valid, and every platform uses the same spec and smoke test."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "build.yml"


def test_workflow_validates_against_the_github_schema():
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    if not Path(exe).exists():
        pytest.skip("check-jsonschema is not installed")
    out = subprocess.run(
        [exe, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_macos_windows_linux_share_the_spec_and_smoke_test():
    flow = yaml.safe_load(WORKFLOW.read_text())
    job = flow["jobs"]["package"]
    oses = {entry["os"].split("-")[0] for entry in job["strategy"]["matrix"]["include"]}
    assert oses == {"ubuntu", "macos", "windows"}
    steps = {s.get("name", ""): s for s in job["steps"]}
    freeze = steps["Freeze (packaging/advisor.spec)"]
    assert "packaging/build.sh" in freeze["run"] and "if" not in freeze  # every platform
    smoke = steps["Smoke test of the frozen app"]
    assert "--smoke-test" in smoke["run"] and "if" not in smoke
    build_sh = (REPO / "packaging" / "build.sh").read_text()
    assert "packaging/advisor.spec" in build_sh
    names = [s.get("name", "") for s in job["steps"]]
    assert names.index("Freeze (packaging/advisor.spec)") < names.index(
        "Smoke test of the frozen app"
    )
    # llama.cpp built with the flags each platform needs
    args = {e["name"]: e["cmake_args"] for e in job["strategy"]["matrix"]["include"]}
    assert "-DGGML_METAL=on" in args["macos-arm64"] and "-DGGML_NATIVE=OFF" in args["macos-arm64"]
    assert "-DGGML_VULKAN=on" in args["windows-x64"] and "-DGGML_OPENMP=OFF" in args["windows-x64"]


def test_ci_tests_job_runs_the_readme_command():
    flow = yaml.safe_load(WORKFLOW.read_text())
    readme = (REPO / "README.md").read_text()
    command = next(
        s["run"] for s in flow["jobs"]["tests"]["steps"] if "run" in s and "pytest" in s["run"]
    )
    assert command in readme
    assert command in (REPO / ".ci" / "run").read_text()
