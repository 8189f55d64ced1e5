"""The upgrade page's table: one row per candidate, the price editable (remembered in the
settings), each figure with its basis and band on hover."""

from __future__ import annotations

from typing import Any

from advisor.core.infra.errors import InputError
from advisor.core.infra.units import fmt_band, fmt_seconds
from advisor.core.infra.validate import number
from advisor.gui.qt import QtCore
from advisor.gui.table_models import BASIS_WORDS, FIT_COLOURS, FIT_WORDS, _Table
from advisor.usecases.prices import price_cell, price_text
from advisor.usecases.upgrade import Candidate

MAX_PRICE = 1e7
SET_PRICE = "Double-click to set your own price."
ASIDE = "Not on the default list: {}."


class CandidateTableModel(_Table):
    """The ranked candidates; the price column is editable (the user's own price)."""

    DEVICE, FITS, ANSWER, FIRST, DECODE, SPEEDUP, PRICE, PER_TPS, POWER, MONTH, BASIS = range(11)
    HEADERS = (
        "Device", "Fits", "Per answer", "First token", "Decode t/s", "Speed-up", "Price",
        "$ per extra t/s", "Power", "Energy / month", "Basis",
    )  # fmt: skip
    HEADER_TIPS = (
        "Green rows are on the value frontier: no cheaper device is faster for this workload.",
        "Does the model with its KV cache fit? 'partly': some layers run from system RAM.",
        "Time for one whole answer of this workload: reading the prompt and writing the answer.",
        "Wait before the first word appears (for many users at once: the last one's wait).",
        "Writing speed each user sees, tokens per second; hover for the likely range.",
        "This machine's time per answer divided by this device's.",
        "What it costs, with the price's kind and month on hover: your own price (double-click "
        "to enter the one you would pay per card; it is remembered), else a street price, new "
        "before used, else the launch price. An upgrade of your PC (RAM, a second card) is "
        "priced from the card's and the RAM kit's.",
        "Price divided by the extra decode tokens per second over this machine.",
        "Power under load: measured on this machine by its run, else from the board power (TDP).",
        "Electricity for this workload's requests a month, at your price per kWh.",
        "What the numbers rest on: measured, published, modelled or spec-only.",
    )
    NUMERIC = frozenset({ANSWER, FIRST, DECODE, SPEEDUP, PRICE, PER_TPS, POWER, MONTH})
    price_edited = QtCore.Signal(str, float)  # device id, price per card
    price_refused = QtCore.Signal(str)

    def display(self, c: Candidate, col: int, row: int) -> str:
        p = c.projection
        if col == self.DEVICE:
            yours = "  (yours)" if self.is_yours_unused(c.target.device.id, c.target.count) else ""
            return c.name + yours + ("  ★" if c.on_frontier else "")
        if col == self.FITS:
            return FIT_WORDS.get(p.fits, p.fits)
        if col == self.BASIS:
            return p.basis
        if col == self.PRICE:
            return price_cell(c.price, "no price")
        if p.fits == "no" or p.basis == "unsupported" or p.request_s is None:
            return "—"
        if col == self.ANSWER:
            return fmt_seconds(p.request_s)
        if col == self.FIRST:
            return fmt_seconds(p.ttft_s)
        if col == self.DECODE:
            return f"{p.per_user_tps:,.1f}" if p.per_user_tps else "—"
        if col == self.SPEEDUP:
            return f"{c.speedup:.1f}x" if c.speedup else "—"
        if col == self.PER_TPS:
            return f"${c.price_per_extra_tps:,.0f}" if c.price_per_extra_tps else "—"
        if col == self.POWER:
            if c.energy is None:
                return "—"
            return f"{'~' if c.energy.method != 'measured' else ''}{c.energy.watts:,.0f} W"
        if col == self.MONTH:
            if c.energy is None or c.energy.cost_per_month is None:
                return "—"
            return f"${c.energy.cost_per_month:,.2f}"
        return ""

    def sort_key(self, c: Candidate, col: int, row: int) -> Any:
        return row  # the ranking is the order

    def tooltip(self, c: Candidate, col: int) -> str | None:
        p = c.projection
        lines = []
        band = p.per_user_band()
        if col == self.DECODE and band:
            lines.append(f"Likely {fmt_band(*band)} tokens/s ({p.decode_basis or p.basis}).")
        if col == self.PRICE:
            lines.append(price_text(c.price, "No price known."))
            lines.append(SET_PRICE)
        if col == self.DEVICE and c.aside:
            lines.append(ASIDE.format(c.aside))
        if col == self.POWER and c.energy is not None:
            j = c.energy.joules_per_token
            lines.append(f"{c.energy.method}; {j:,.2f} J per token." if j else c.energy.method)
        if col == self.BASIS:
            lines.append(BASIS_WORDS.get(p.basis, p.basis))
        lines += list(p.notes)
        return "\n".join(lines) or None

    def colour(self, c: Candidate, col: int) -> str | None:
        if col == self.FITS:
            return FIT_COLOURS.get(c.projection.fits)
        if col == self.DEVICE and c.on_frontier:
            return FIT_COLOURS["yes"]
        if not c.within_budget:
            return "#8a8a8a"
        return None

    def flags(self, index: QtCore.QModelIndex) -> QtCore.Qt.ItemFlag:
        base = super().flags(index)
        # a card's price is the user's to set; an upgrade of the computer is priced from the
        # card's and the RAM kit's
        if index.column() == self.PRICE and self.row_object(index.row()).kind == "card":
            return base | QtCore.Qt.ItemFlag.ItemIsEditable
        return base

    def setData(self, index: QtCore.QModelIndex, value: Any, role: int = 2) -> bool:
        if role != QtCore.Qt.ItemDataRole.EditRole or index.column() != self.PRICE:
            return False
        c: Candidate = self.row_object(index.row())
        text = str(value).strip().replace("$", "").replace(",", "")
        try:
            usd = number("The price", text, 0, MAX_PRICE, unit="dollars")
        except InputError as exc:
            self.price_refused.emit(str(exc))
            return False
        self.price_edited.emit(c.target.device.id, usd / max(1, c.target.count))
        return True
