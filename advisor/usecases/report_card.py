"""The report card: a run and its upgrade answer on one page, to paste in a forum thread.

Its content (`ReportCard`) is made from the upgrade answer object, the one the Upgrade page and
`advisor upgrade` render, never from a widget's text. One self-contained HTML file (inline
style, the chart as an embedded PNG, no scripts and no link to anything outside it) and the
same content for a PNG (the app renders the HTML).
"""

from __future__ import annotations

import base64
import html
import time
from dataclasses import dataclass

from advisor import __version__
from advisor.core.runs.results import RunResult
from advisor.usecases.prices import price_text
from advisor.usecases.upgrade_answer import UpgradeAnswer

TOP = 6  # cards the card lists: the pick and the next ones, as ranked
BASIS_NOTE = (
    "Basis: measured = this run; published = llama.cpp results published for that device; "
    "modelled = from its class; spec-only = the datasheet alone."
)


@dataclass(frozen=True)
class CardRow:
    device: str
    fits: str
    per_answer: str
    decode_tps: str
    speedup: str
    price: str  # with its kind and date: '$5,258 (new, 2026-09)'
    basis: str


@dataclass(frozen=True)
class ReportCard:
    """What the card says, in the order it says it."""

    title: str
    subtitle: str
    warnings: tuple[str, ...]  # a disturbed run, a quiet run used instead
    measured: tuple[tuple[str, str, str, str], ...]  # test, tokens/s, ceiling, share of it
    measured_note: str  # '' where there are measured rows
    verdict: tuple[str, ...]
    cards: tuple[CardRow, ...]
    basis_note: str = BASIS_NOTE


def _tps(value: float | None, digits: int = 1) -> str:
    return f"{value:,.{digits}f}" if value else "—"


def _measured(run: RunResult | None) -> tuple[tuple[str, str, str, str], ...]:
    if run is None:
        return ()
    rows = []
    for t in run.tests:
        ceiling = t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps
        share = f"{t.efficiency:.0%}" if t.efficiency else "—"
        rows.append((t.name, _tps(t.tokens_per_s), _tps(ceiling), share))
    return tuple(rows)


def report_card(answer: UpgradeAnswer, top: int = TOP, when: str | None = None) -> ReportCard:
    """The card's content, from the answer (the run it rests on, its warnings, the verdict
    and the first `top` ranked cards with their prices)."""
    run = answer.trust.used
    cards = []
    for c in (answer.ranking.candidates if answer.ranking else ())[:top]:
        p = c.projection
        cards.append(
            CardRow(
                c.name, p.fits, f"{p.request_s:,.1f} s" if p.request_s else "—",
                _tps(p.per_user_tps), f"{c.speedup:.1f}x" if c.speedup else "—",
                price_text(c.price, "—"), p.basis,
            )
        )  # fmt: skip
    day = when or time.strftime("%Y-%m-%d")
    return ReportCard(
        title=f"{answer.model} on {answer.machine}",
        subtitle=f"Workload: {answer.workload}. LLM Hardware Advisor {__version__}, {day}.",
        warnings=tuple(x for x in (answer.warning, answer.note) if x),
        measured=_measured(run),
        measured_note="" if run else "No benchmark yet: the figures below are predictions.",
        verdict=answer.verdict_lines(),
        cards=tuple(cards),
    )


def _e(text: object) -> str:
    return html.escape(str(text))


STYLE = (
    "body{font-family:-apple-system,'Segoe UI',Roboto,sans-serif;max-width:860px;margin:24px;"
    "color:#1d1d1f;background:#fff}h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;"
    "margin:18px 0 6px}table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;"
    "border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}"
    ".muted{color:#666}.verdict{background:#eef4ff;padding:10px 12px;border-radius:6px}"
    ".warning{background:#fff4e5;color:#8a4b00;padding:10px 12px;border-radius:6px}"
)


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]], numeric: set[int]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='n'>{_e(x)}</td>" if i in numeric else f"<td>{_e(x)}</td>"
            for i, x in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def report_card_html(card: ReportCard, chart_png: bytes | None = None) -> str:
    """The card as one HTML document with nothing outside it."""
    chart = (
        f"<img alt='price against speed' src='data:image/png;base64,"
        f"{base64.b64encode(chart_png).decode('ascii')}' style='max-width:100%'>"
        if chart_png
        else ""
    )
    warnings = "".join(f"<p class='warning'>{_e(w)}</p>" for w in card.warnings)
    measured = (
        _table(("test", "tokens/s", "ceiling", "of ceiling"), list(card.measured), {1, 2, 3})
        if card.measured
        else f"<p class='muted'>{_e(card.measured_note)}</p>"
    )
    cards = _table(
        ("device", "fits", "per answer", "decode t/s", "speed-up", "price", "basis"),
        [
            (c.device, c.fits, c.per_answer, c.decode_tps, c.speedup, c.price, c.basis)
            for c in card.cards
        ],
        {2, 3, 4, 5},
    )
    verdict = "".join(f"<p>{_e(line)}</p>" for line in card.verdict)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{_e(card.title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(card.title)}</h1><p class='muted'>{_e(card.subtitle)}</p>{warnings}"
        f"<h2>Measured here</h2>{measured}"
        f"<h2>Would an upgrade pay off?</h2><div class='verdict'>{verdict}</div>"
        f"<h2>Best candidates</h2>{cards}{chart}"
        f"<p class='muted'>{_e(card.basis_note)}</p></body></html>"
    )
