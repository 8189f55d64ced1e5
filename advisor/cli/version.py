"""`advisor --version`: the versions of everything inside, for a bug report."""

from __future__ import annotations

from advisor.cli.output import Output, format_pairs
from advisor.usecases.about import about_facts


def _qt_versions() -> tuple[str | None, str | None]:
    """Qt as the loaded library reports it, and PySide6; None without Qt."""
    try:
        import PySide6
        from PySide6.QtCore import qVersion
    except ImportError:
        return None, None
    return qVersion(), PySide6.__version__


def version_output() -> Output:
    """Every fact of the About box; asks llama.cpp (in a child) when no detection is cached."""
    qt, pyside6 = _qt_versions()
    facts = about_facts(qt_version=qt, pyside6_version=pyside6, ask_llama=True)
    return Output(facts, lambda: format_pairs(facts.lines()))
