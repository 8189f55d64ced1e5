"""Third-party notices: every distribution the bundle carries has an entry naming its license,
Qt's entry says where its source is and that its libraries can be replaced, and the check
fails when an entry is missing or has no license. A built dist/advisor is checked too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.usecases.notices import (
    NOTICES_FILE,
    Notice,
    build_notices,
    dist_info_names,
    license_of,
    main,
    notice_problems,
    notices_text,
    parse_notices,
    runtime_distributions,
)

REPO = Path(__file__).resolve().parents[1]
BUNDLE = REPO / "dist" / "advisor"
COMMIT = "0c1e570-dirty (ggml 0.25.3)"


@pytest.fixture(scope="module")
def bundled() -> list[str]:
    return runtime_distributions()


@pytest.fixture(scope="module")
def text(bundled) -> str:
    return notices_text(build_notices(bundled, qt_version="6.12.0", llama_cpp_commit=COMMIT))


def test_the_bundle_carries_the_declared_dependencies_and_theirs(bundled):
    # the app's own requirements, and what they pull in (shiboken6 under PySide6)
    for name in ("pyside6-essentials", "shiboken6", "pyqtgraph", "numpy", "llama-cpp-python"):
        assert name in bundled
    assert "pytest" not in bundled and "pyinstaller" not in bundled  # test/package extras


def test_every_bundled_distribution_has_an_entry_with_a_license(bundled, text):
    assert notice_problems(text, bundled) == []
    entries = parse_notices(text)
    assert set(bundled) <= set(entries)
    assert all(entries[name] for name in bundled)
    assert entries["numpy"].startswith("BSD-3-Clause")
    assert "LGPL-3.0" in entries["pyside6-essentials"]
    # their license texts are in the file, not only their names
    assert "Permission is hereby granted" in text  # MIT (the app, llama.cpp, pyqtgraph ...)
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text and "GNU GENERAL PUBLIC LICENSE" in text


def test_qt_and_llama_cpp_say_what_the_licenses_ask(text):
    qt = text[text.index("Name: Qt\n") :].split("=" * 78)[0]
    assert "Version: 6.12.0" in qt and "License: LGPL-3.0-only" in qt
    assert "https://download.qt.io/official_releases/qt/6.12/6.12.0/" in qt
    assert re.search(r"separate\s+shared\s+libraries", qt) and "replace" in qt
    llama = text[text.index("Name: llama.cpp\n") :].split("=" * 78)[0]
    assert f"Version: {COMMIT}" in llama and "License: MIT" in llama
    assert "github.com/ggml-org/llama.cpp/tree/0c1e570" in llama
    assert "The ggml authors" in llama


def test_a_distribution_left_out_of_the_notices_fails_the_check(bundled):
    without_numpy = [n for n in bundled if n != "numpy"]
    text = notices_text(build_notices(without_numpy, qt_version="6.12.0", llama_cpp_commit=None))
    assert notice_problems(text, bundled) == ["numpy is bundled but has no entry in the notices."]


def test_a_distribution_without_a_license_fails_the_check(text):
    doctored = notices_text([Notice("mystery-lib", "1.0", "")])
    problems = notice_problems(doctored, ["mystery-lib"])
    assert problems == ["mystery-lib has no license in the notices: add it or drop the package."]
    # and in a full file: one entry's license blanked out
    blanked = re.sub(r"(Name: tqdm\nVersion: .*\nLicense: ).*", r"\1", text)
    assert blanked != text
    assert notice_problems(blanked, ["tqdm"]) == [
        "tqdm has no license in the notices: add it or drop the package."
    ]


def test_a_license_is_read_from_expression_field_or_classifier():
    from email.message import Message

    def meta(**fields: str | list[str]) -> Message:
        m = Message()
        for key, values in fields.items():
            for value in values if isinstance(values, list) else [values]:
                m[key.replace("_", "-")] = value
        return m

    assert license_of(meta(License_Expression="MIT", License="BSD")) == "MIT"
    assert license_of(meta(License="Apache 2.0")) == "Apache 2.0"
    classifier = "License :: OSI Approved :: BSD License"
    assert license_of(meta(Classifier=[classifier, "Topic :: Science"])) == "BSD License"
    assert license_of(meta(License="UNKNOWN")) == ""  # what the check then refuses
    assert license_of(meta()) == ""


def test_dist_info_folders_are_named_by_their_metadata(tmp_path):
    info = tmp_path / "_internal" / "PySide6_Essentials-6.12.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: PySide6_Essentials\n")
    assert dist_info_names(tmp_path) == ["pyside6-essentials"]


@pytest.mark.skipif(not BUNDLE.is_dir(), reason="no dist/advisor here (packaging/build.sh)")
def test_the_built_bundle_lists_every_distribution_inside_it():
    path = BUNDLE / NOTICES_FILE
    assert path.is_file(), "packaging/build.sh writes the notices beside the programs"
    inside = dist_info_names(BUNDLE / "_internal")
    assert inside, "the bundle carries no distribution metadata at all?"
    assert notice_problems(path.read_text(encoding="utf-8"), inside) == []
    assert (BUNDLE / "_internal" / NOTICES_FILE).read_bytes() == path.read_bytes()
    assert main(["--check", str(BUNDLE)]) == 0
