"""`advisor --version`: the versions of everything inside, for a bug report."""

from __future__ import annotations

from advisor.cli.output import Output, format_pairs
from advisor.usecases.about import about_facts


def version_output() -> Output:
    facts = about_facts()
    return Output(facts, lambda: format_pairs([(k.replace("_", " "), v) for k, v in facts.items()]))
