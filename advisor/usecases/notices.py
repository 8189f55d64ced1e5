"""Third-party notices: who made what the app is built from, under which license, and where
the source is.

Generated from the installed distributions (importlib.metadata: name, version, license
expression, classifier or field, and the license files each one ships), plus the parts no
distribution describes: Python itself, Qt (LGPL-3.0: where its source is, and that the
one-folder bundle keeps its libraries replaceable) and llama.cpp/ggml (the commit
llama-cpp-python vendors). packaging/advisor.spec writes the text into the frozen bundle as
THIRD_PARTY_NOTICES.txt; the About box shows the bundled file, or, run from source, the same
text generated on the spot. `notice_problems` is the check the build and the packaging test
run: every bundled distribution has an entry, and every entry names a license.

Run as a program (`python -m advisor.usecases.notices --check dist/advisor`) it checks a built
bundle's notices against the distributions inside it.
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from advisor import APP_NAME, __version__
from advisor.core.infra.paths import bundled

NOTICES_FILE = "THIRD_PARTY_NOTICES.txt"
APP_DISTRIBUTION = "llm-hardware-advisor"
QT_SOURCE_URL = "https://download.qt.io/official_releases/qt/"
PYSIDE_SOURCE_URL = "https://download.qt.io/official_releases/QtForPython/"
QT_THIRD_PARTY_URL = "https://doc.qt.io/qt-6/licenses-used-in-qt.html"
LLAMA_CPP_URL = "https://github.com/ggml-org/llama.cpp"
RULE = "=" * 78
_ENTRY = re.compile(r"^={78}\nName: (.*)\nVersion: (.*)\nLicense: (.*)$", re.MULTILINE)
_LICENSE_FILE = re.compile(r"(licen[cs]e|copying|notice|authors)", re.IGNORECASE)
_NO_LICENSE = {"", "unknown", "none", "n/a"}

# what a reader needs to know about some entries beyond their metadata
_NOTES = {
    "pyside6-essentials": "Qt for Python, the binding through which the app uses Qt (see the "
    "Qt entry, which also holds the LGPL-3.0 and GPL-3.0 texts).",
    "shiboken6": "The runtime of Qt for Python's binding generator (see the Qt entry, which also "
    "holds the LGPL-3.0 and GPL-3.0 texts).",
    "pyinstaller": "Only PyInstaller's bootloader, the small program that starts the frozen "
    "app, is in the bundle; its license allows that for programs under any license.",
    "llama-cpp-python": "The Python binding to llama.cpp; the llama.cpp and ggml libraries it "
    "carries are described in the llama.cpp entry.",
}


@dataclass(frozen=True)
class Notice:
    """One entry: a component, its license in a few words, where its source is, and the
    license texts it ships ((title, text) pairs)."""

    name: str
    version: str
    license: str
    source: str = ""
    note: str = ""
    texts: tuple[tuple[str, str], ...] = ()


def normalise(name: str) -> str:
    """A distribution's name as packaging compares them ("PySide6_Essentials" is
    "pyside6-essentials")."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --- which distributions -------------------------------------------------------------------


def runtime_distributions(root: str = APP_DISTRIBUTION) -> list[str]:
    """The installed distributions `root` needs at run time, recursively (its `requires`,
    extras left out, environment markers evaluated here): what a frozen bundle carries.
    Normalised names, sorted, `root` itself not included."""
    seen: set[str] = set()
    todo = [normalise(root)]
    while todo:
        try:
            dist = metadata.distribution(todo.pop())
        except metadata.PackageNotFoundError:
            continue
        for requirement in dist.requires or ():
            name = _needed(requirement)
            if name is not None and name not in seen:
                seen.add(name)
                todo.append(name)
    return sorted(n for n in seen if _installed(n) and n != normalise(root))


def _needed(requirement: str) -> str | None:
    """The name a requirement line asks for on this machine, None when its marker says no
    (an extra, another platform)."""
    try:
        from packaging.requirements import Requirement  # present wherever pip builds
    except ImportError:  # without it: extras are left out, other markers kept (over-inclusive)
        name, _, marker = requirement.partition(";")
        if "extra" in marker:
            return None
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", name)
        return normalise(match.group(1)) if match else None
    req = Requirement(requirement)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        return None
    return normalise(req.name)


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def dist_info_names(folder: str | Path) -> list[str]:
    """The distributions whose metadata (*.dist-info) lies in `folder` or below it, as their
    METADATA names them (normalised, sorted): what PyInstaller copied into a bundle."""
    return dist_info_names_of(Path(folder).rglob("*.dist-info/*"))


def dist_info_names_of(paths: Iterable[str | Path]) -> list[str]:
    """The distributions these files' *.dist-info folders belong to (normalised, sorted):
    read from the paths PyInstaller is about to bundle, or those of a built bundle."""
    folders = set()
    for path in map(Path, paths):
        for folder in (path, *path.parents):
            if folder.name.endswith(".dist-info"):
                folders.add(folder)
                break
    names = set()
    for folder in folders:
        name = metadata.PathDistribution(folder).metadata["Name"] if folder.is_dir() else None
        names.add(normalise(name or folder.name.split("-")[0]))
    return sorted(names)


# --- one entry each --------------------------------------------------------------------------


def license_of(meta: metadata.PackageMetadata) -> str:
    """A distribution's license in a few words: its SPDX expression, else a short License
    field, else its License classifiers, else the first line of a long License field."""
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression
    field = (meta.get("License") or "").strip()
    if field.lower() not in _NO_LICENSE and "\n" not in field and len(field) <= 200:
        return field
    classifiers = [
        c.split(" :: ")[-1] for c in meta.get_all("Classifier") or () if c.startswith("License ::")
    ]
    if classifiers:
        return "; ".join(classifiers)
    return field.splitlines()[0][:200] if field.lower() not in _NO_LICENSE else ""


def _license_texts(dist: metadata.Distribution) -> list[tuple[str, str]]:
    """The license files the distribution ships in its metadata folder (PEP 639's licenses/
    or beside METADATA), else those its License-File entries name."""
    texts: list[tuple[str, str]] = []
    for path in dist.files or ():
        parts = path.parts
        if parts and parts[0].endswith(".dist-info") and _LICENSE_FILE.search(path.name):
            text = Path(str(path.locate())).read_text(encoding="utf-8", errors="replace")
            texts.append(("/".join(parts[1:]), text))
    if not texts:
        for name in dist.metadata.get_all("License-File") or ():
            text = dist.read_text(f"licenses/{name}") or dist.read_text(name)
            if text:
                texts.append((name, text))
    field = (dist.metadata.get("License") or "").strip()
    if "\n" in field or len(field) > 200:  # the whole license text in the field
        texts.append(("License field of the metadata", field))
    return texts


def _source_of(dist: metadata.Distribution, name: str) -> str:
    if name in ("pyside6-essentials", "pyside6", "shiboken6"):
        return PYSIDE_SOURCE_URL  # the source archives of every release
    urls = dict(
        (label.strip().lower(), url.strip())
        for label, _, url in (u.partition(",") for u in dist.metadata.get_all("Project-URL") or ())
    )
    for key in ("source", "source code", "repository", "code", "homepage", "home"):
        if urls.get(key):
            return urls[key]
    return dist.metadata.get("Home-page") or f"https://pypi.org/project/{name}/{dist.version}/"


def distribution_notice(name: str) -> Notice:
    """The entry for one installed distribution, from its metadata."""
    dist = metadata.distribution(name)
    key = normalise(dist.metadata["Name"] or name)
    texts = _license_texts(dist)
    if key == APP_DISTRIBUTION and not texts:  # run from a checkout: the file beside it
        here = Path(__file__).resolve().parents[2] / "LICENSE"
        if here.is_file():
            texts.append(("LICENSE", here.read_text(encoding="utf-8")))
    license_name = license_of(dist.metadata)
    note = _NOTES.get(key, "")
    if not texts and license_name:
        shipped = f"It ships no license text; its metadata names the license: {license_name}."
        note = f"{note} {shipped}".strip()
    return Notice(key, dist.version, license_name, _source_of(dist, key), note, tuple(texts))


def _resource_text(name: str) -> str:
    return (bundled("resources") / "licenses" / name).read_text(encoding="utf-8")


def qt_notice(qt_version: str | None) -> Notice:
    """Qt, under the LGPL-3.0: where this version's source is, and that the bundle keeps the
    Qt libraries replaceable."""
    version = qt_version or "unknown"
    match = re.match(r"(\d+\.\d+)\.\d+", version)
    source = f"{QT_SOURCE_URL}{match.group(1)}/{version}/" if match else QT_SOURCE_URL
    note = (
        "The app uses Qt through PySide6 (the pyside6-essentials and shiboken6 entries) under "
        "the GNU Lesser General Public License version 3 (LGPL-3.0); its text, and that of the "
        "GNU General Public License version 3 it builds on, follow. The source code of this Qt "
        f"version is at {source} (every release: {QT_SOURCE_URL}). The installers are made by "
        "PyInstaller in its one-folder layout, which keeps the Qt libraries as separate shared "
        "libraries in the app's folder (under PySide6/: Qt6Core.dll and the like on Windows, "
        "libQt6Core.so.6 on Linux, QtCore.framework on macOS), so you can replace them with "
        "your own build of the same Qt version. Qt contains third-party components under their "
        f"own licenses, listed at {QT_THIRD_PARTY_URL}."
    )
    texts = (
        ("LGPL-3.0", _resource_text("LGPL-3.0.txt")),
        ("GPL-3.0", _resource_text("GPL-3.0.txt")),
    )
    return Notice("Qt", version, "LGPL-3.0-only", source, note, texts)


def llama_cpp_notice(commit: str | None, llama_cpp_python_version: str | None) -> Notice:
    """llama.cpp and ggml (MIT), compiled into llama-cpp-python's libraries."""
    sha = (commit or "").split(" ")[0].removesuffix("-dirty")
    source = (
        f"{LLAMA_CPP_URL}/tree/{sha}" if re.fullmatch(r"[0-9a-f]{7,40}", sha) else LLAMA_CPP_URL
    )
    binding = llama_cpp_python_version or "unknown"
    note = (
        "llama.cpp and its tensor library ggml, built into the shared libraries of "
        f"llama-cpp-python {binding} (libllama, libggml*). The version is the llama.cpp commit "
        "they were built from, as ggml reports it ('-dirty': with llama-cpp-python's patches)."
    )
    texts = (("LICENSE", _resource_text("llama.cpp-LICENSE.txt")),)
    return Notice("llama.cpp", commit or "unknown commit", "MIT", source, note, texts)


def python_notice() -> Notice:
    """The Python interpreter and standard library the bundle carries."""
    base = Path(sys.base_prefix)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    texts: tuple[tuple[str, str], ...] = ()
    for candidate in (base / "lib" / f"python{version}" / "LICENSE.txt", base / "LICENSE.txt"):
        if candidate.is_file():
            texts = (("LICENSE.txt", candidate.read_text(encoding="utf-8", errors="replace")),)
            break
    note = "" if texts else "Its license text: https://docs.python.org/3/license.html"
    source = "https://www.python.org/downloads/source/"
    return Notice("Python", platform.python_version(), "PSF-2.0", source, note, texts)


def build_notices(
    distributions: Iterable[str], *, qt_version: str | None, llama_cpp_commit: str | None
) -> list[Notice]:
    """Every entry: the app, Python, Qt, llama.cpp, then the distributions by name."""
    names = sorted({normalise(n) for n in distributions} - {APP_DISTRIBUTION})
    binding = metadata.version("llama-cpp-python") if _installed("llama-cpp-python") else None
    entries = [distribution_notice(APP_DISTRIBUTION)] if _installed(APP_DISTRIBUTION) else []
    entries += [python_notice(), qt_notice(qt_version), llama_cpp_notice(llama_cpp_commit, binding)]
    return entries + [distribution_notice(n) for n in names]


# --- the text, and its check -----------------------------------------------------------------


def notices_text(notices: Sequence[Notice], app_version: str = __version__) -> str:
    """The notices as one plain text file: a header with the contents, then each entry."""
    lines = [
        f"{APP_NAME} {app_version}: third-party notices",
        "",
        f"{APP_NAME} is free software under the MIT license (the first entry). It is built",
        "from the components below, each under its own license; each entry says where its",
        "source is and holds the license texts it ships.",
        "",
        "Contents:",
        *(f"  {n.name} {n.version} ({n.license or 'no license stated'})" for n in notices),
        "",
    ]
    for n in notices:
        lines += [RULE, f"Name: {n.name}", f"Version: {n.version}", f"License: {n.license}"]
        if n.source:
            lines.append(f"Source: {n.source}")
        if n.note:
            lines += ["", textwrap.fill(n.note, width=78, break_on_hyphens=False)]
        for title, text in n.texts:
            lines += ["", f"--- {title} ---", "", text.strip("\n")]
        lines.append("")
    return "\n".join(lines) + "\n"


def parse_notices(text: str) -> dict[str, str]:
    """Each entry's normalised name and its license, read back from the text."""
    return {normalise(m.group(1).strip()): m.group(3).strip() for m in _ENTRY.finditer(text)}


def notice_problems(text: str, distributions: Iterable[str]) -> list[str]:
    """What is wrong with the notices for these distributions, one sentence each: a
    distribution without an entry, an entry without a license. Empty: they are complete."""
    entries = parse_notices(text)
    problems = []
    for name in sorted({normalise(d) for d in distributions}):
        if name not in entries:
            problems.append(f"{name} is bundled but has no entry in the notices.")
    for name, license_name in sorted(entries.items()):
        if license_name.lower() in _NO_LICENSE:
            problems.append(f"{name} has no license in the notices: add it or drop the package.")
    return problems


# --- the file: in the bundle, or generated -----------------------------------------------


def bundled_notices_file() -> Path | None:
    """The notices file of a frozen app (beside its executable, or among its data), None when
    running from source or when the file is missing."""
    from advisor.startup import bundle_dir

    folder = bundle_dir()
    if folder is None:
        return None
    exe = Path(sys.executable).resolve().parent
    for candidate in (
        exe / NOTICES_FILE,
        folder / NOTICES_FILE,
        exe.parent / "Resources" / NOTICES_FILE,
    ):
        if candidate.is_file():
            return candidate
    return None


def app_notices(*, qt_version: str | None, llama_cpp_commit: str | None) -> str:
    """The notices the About box shows: the frozen app's own file, else (run from source)
    generated now for the distributions a bundle would carry. Reads files: call it off the GUI
    thread."""
    path = bundled_notices_file()
    if path is not None:
        return path.read_text(encoding="utf-8", errors="replace")
    entries = build_notices(
        runtime_distributions(), qt_version=qt_version, llama_cpp_commit=llama_cpp_commit
    )
    return notices_text(entries)


def main(argv: Sequence[str] | None = None) -> int:
    """`--check DIR`: the bundle's notices list every distribution inside it, each with a
    license (exit 1 and the problems otherwise)."""
    parser = argparse.ArgumentParser(prog="python -m advisor.usecases.notices")
    parser.add_argument("--check", metavar="BUNDLE", required=True, help="e.g. dist/advisor")
    args = parser.parse_args(argv)
    bundle = Path(args.check)
    path = bundle / NOTICES_FILE
    if not path.is_file():
        print(f"{path} is missing", file=sys.stderr)
        return 1
    problems = notice_problems(path.read_text(encoding="utf-8"), dist_info_names(bundle))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{path}: every distribution in {bundle} is listed with its license")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
