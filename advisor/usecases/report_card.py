"""The report card: a run and its upgrade answer on one page, to paste in a forum thread.

One self-contained HTML file (inline style, the chart as an embedded PNG, no scripts and no
link to anything outside it) and the same content for a PNG (the app renders the HTML).
"""

from __future__ import annotations

import base64
import html
import time
from collections.abc import Sequence
from dataclasses import dataclass

from advisor import __version__
from advisor.core.runs.results import RunResult
from advisor.usecases.prices import price_text
from advisor.usecases.upgrade import Candidate

TOP = 6


@dataclass(frozen=True)
class CardFacts:
    machine: str
    model: str
    workload: str
    run: RunResult | None
    candidates: Sequence[Candidate]
    verdict_lines: Sequence[str]
    mine_request_s: float | None = None


def _e(text: object) -> str:
    return html.escape(str(text))


def _tps(value: float | None, digits: int = 1) -> str:
    return f"{value:,.{digits}f}" if value else "—"


def _measured_rows(run: RunResult | None) -> str:
    if run is None:
        return "<p class='muted'>No benchmark yet: the figures below are predictions.</p>"
    rows = []
    for t in run.tests:
        ceiling = t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps
        share = f"{t.efficiency:.0%}" if t.efficiency else "—"
        rows.append(
            f"<tr><td>{_e(t.name)}</td><td class='n'>{_tps(t.tokens_per_s)}</td>"
            f"<td class='n'>{_tps(ceiling)}</td><td class='n'>{share}</td></tr>"
        )
    return (
        "<table><tr><th>test</th><th>tokens/s</th><th>ceiling</th><th>of ceiling</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _candidate_rows(candidates: Sequence[Candidate]) -> str:
    rows = []
    for c in candidates[:TOP]:
        p = c.projection
        price = _e(price_text(c.price, "—"))
        speedup = f"{c.speedup:.1f}x" if c.speedup else "—"
        per_answer = f"{p.request_s:,.1f} s" if p.request_s else "—"
        rows.append(
            f"<tr><td>{_e(c.name)}</td><td>{_e(p.fits)}</td><td class='n'>{per_answer}</td>"
            f"<td class='n'>{_tps(p.per_user_tps)}</td><td class='n'>{speedup}</td>"
            f"<td class='n'>{price}</td><td>{_e(p.basis)}</td></tr>"
        )
    return (
        "<table><tr><th>device</th><th>fits</th><th>per answer</th><th>decode t/s</th>"
        "<th>speed-up</th><th>price</th><th>basis</th></tr>" + "".join(rows) + "</table>"
    )


STYLE = (
    "body{font-family:-apple-system,'Segoe UI',Roboto,sans-serif;max-width:860px;margin:24px;"
    "color:#1d1d1f;background:#fff}h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;"
    "margin:18px 0 6px}table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;"
    "border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}"
    ".muted{color:#666}.verdict{background:#eef4ff;padding:10px 12px;border-radius:6px}"
)


def report_card_html(facts: CardFacts, chart_png: bytes | None = None) -> str:
    """The card as one HTML document with nothing outside it."""
    chart = (
        f"<img alt='price against speed' src='data:image/png;base64,"
        f"{base64.b64encode(chart_png).decode('ascii')}' style='max-width:100%'>"
        if chart_png
        else ""
    )
    verdict = "".join(f"<p>{_e(line)}</p>" for line in facts.verdict_lines)
    when = time.strftime("%Y-%m-%d")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{_e(facts.model)} on {_e(facts.machine)}</title><style>{STYLE}</style>"
        "</head><body>"
        f"<h1>{_e(facts.model)} on {_e(facts.machine)}</h1>"
        f"<p class='muted'>Workload: {_e(facts.workload)}. LLM Hardware Advisor {__version__}, "
        f"{when}.</p>"
        f"<h2>Measured here</h2>{_measured_rows(facts.run)}"
        f"<h2>Would an upgrade pay off?</h2><div class='verdict'>{verdict}</div>"
        f"<h2>Best candidates</h2>{_candidate_rows(facts.candidates)}{chart}"
        "<p class='muted'>Basis: measured = this run; published = llama.cpp results published "
        "for that device; modelled = from its class; spec-only = the datasheet alone.</p>"
        "</body></html>"
    )
