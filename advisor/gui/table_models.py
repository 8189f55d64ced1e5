"""Table models for every table in the app (devices and projections, runs, tests).

Each is a QAbstractTableModel over plain core objects, with column constants and a sort role
that returns numbers (so "1,008" sorts after "864"), tested without a window.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from advisor.core.catalogue.prices import Price
from advisor.core.infra.units import GB, fmt_band, fmt_bytes, fmt_seconds
from advisor.core.predict.projecting.projection import Projection
from advisor.core.predict.projecting.projection_types import FIT_RANK, FIT_WORDS
from advisor.core.runs.results import RunResult, TestResult
from advisor.gui.qt import QtCore, QtGui
from advisor.usecases.prices import price_cell, price_text

SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
OBJECT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2
DISPLAY = QtCore.Qt.ItemDataRole.DisplayRole
TOOLTIP = QtCore.Qt.ItemDataRole.ToolTipRole
ALIGN = QtCore.Qt.ItemDataRole.TextAlignmentRole
FOREGROUND = QtCore.Qt.ItemDataRole.ForegroundRole
RIGHT = int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)

FIT_COLOURS = {"yes": "#2e7d32", "hybrid": "#b26a00", "partial": "#b26a00", "no": "#c62828"}


class _Table(QtCore.QAbstractTableModel):
    HEADERS: tuple[str, ...] = ()
    HEADER_TIPS: tuple[str, ...] = ()
    NUMERIC: frozenset[int] = frozenset()

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self._rows: list[Any] = []
        # sorting asks for each cell's key many times (n log n comparisons), and painting,
        # filtering and fitting columns ask for each cell's text again and again: each once
        self._sort_keys: dict[tuple[int, int], Any] = {}
        self._texts: dict[tuple[int, int], str] = {}
        self._row_texts: dict[int, str] = {}
        # a card in this machine the llama.cpp build does not use (its id): its row says yours
        self.yours_unused: str | None = None

    def is_yours_unused(self, device_id: str, count: int) -> bool:
        return count == 1 and device_id == self.yours_unused

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: QtCore.Qt.Orientation, role: int = DISPLAY
    ) -> Any:
        if orientation == QtCore.Qt.Orientation.Horizontal and role == DISPLAY:
            return self.HEADERS[section]
        if (
            orientation == QtCore.Qt.Orientation.Horizontal
            and role == TOOLTIP
            and section < len(self.HEADER_TIPS)
        ):
            return self.HEADER_TIPS[section] or None
        return None

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self._sort_keys.clear()
        self._texts.clear()
        self._row_texts.clear()
        self.endResetModel()

    def cell_sort_key(self, row: int, col: int) -> Any:
        key = (row, col)
        if key not in self._sort_keys:
            self._sort_keys[key] = self.sort_key(self._rows[row], col, row)
        return self._sort_keys[key]

    def row_object(self, row: int) -> Any:
        return self._rows[row]

    def cell_text(self, row: int, col: int) -> str:
        key = (row, col)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = self.display(self._rows[row], col, row)
        return text

    def row_text(self, row: int) -> str:
        """Every cell's text in the row, case-folded, one cell per line: what a filter
        searches (one call per row, where Qt's own filter asks each cell through Python)."""
        text = self._row_texts.get(row)
        if text is None:
            cells = (self.cell_text(row, col) for col in range(len(self.HEADERS)))
            text = self._row_texts[row] = "\n".join(cells).casefold()
        return text

    def data(self, index: QtCore.QModelIndex, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        obj = self._rows[index.row()]
        col = index.column()
        if role == DISPLAY:
            return self.cell_text(index.row(), col)
        if role == SORT_ROLE:
            return self.cell_sort_key(index.row(), col)
        if role == OBJECT_ROLE:
            return obj
        if role == ALIGN and col in self.NUMERIC:
            return RIGHT
        if role == TOOLTIP:
            return self.tooltip(obj, col)
        if role == FOREGROUND:
            colour = self.colour(obj, col)
            return QtGui.QBrush(QtGui.QColor(colour)) if colour else None
        return None

    # overridden per table
    def display(self, obj: Any, col: int, row: int) -> str:
        raise NotImplementedError

    def sort_key(self, obj: Any, col: int, row: int) -> Any:
        return self.display(obj, col, row)

    def tooltip(self, obj: Any, col: int) -> str | None:
        return None

    def colour(self, obj: Any, col: int) -> str | None:
        return None


def fmt_gb(gb: float) -> str:
    """A memory size as a table shows it: '24 GB', '23.5 GB' (a detected size), '0.5 GB'."""
    return f"{gb:.0f} GB" if abs(gb - round(gb)) < 0.05 or gb >= 100 else f"{gb:.1f} GB"


def _num(value: float | None, fmt: str) -> str:
    return format(value, fmt) if value is not None else "—"


class ProjectionTableModel(_Table):
    """Devices with their predicted speed for the chosen model and workload."""

    DEVICE, CLASS, MEMORY, FITS, DECODE, BAND, PREFILL, TTFT, REQUEST, PRICE, BASIS = range(11)
    HEADER_TIPS = (
        "Click a column to sort; this machine always stays on top.",
        "",
        "The memory size assumed (the smallest option the model fits in).",
        "Does the model with its KV cache fit in this device's memory? 'partly' means some "
        "layers run from system RAM, much slower.",
        "Writing speed each user sees (decode): how fast the answer appears, tokens per "
        "second; with several users at once, each one's share.",
        "Where the true decode speed most likely lands: the range that held about 85% of "
        "held-out errors for this basis and backend, wider for mixtures of experts, many "
        "users, deep contexts and spilled layers; for your own run, its measured spread.",
        "Reading speed (prefill): how fast the prompt is processed, tokens per second.",
        "Time to first token: the wait before the answer starts.",
        "Time for a whole request of this workload: reading the prompt plus writing the answer.",
        "What the card (or cards) costs: your own price where you typed one on the Upgrade page, "
        "else a dated street price (new, else used), else the launch price; hover for which.",
        "measured: your benchmark on this device; published: llama.cpp results published for "
        "this device; modelled: none for this device, its class has some; spec-only: the "
        "datasheet alone; unsupported: the device does not run this backend.",
    )
    HEADERS = (
        "Device",
        "Class",
        "Memory",
        "Fits",
        "Decode t/s",
        "Likely range",
        "Prefill t/s",
        "First token",
        "Per request",
        "Price",
        "Basis",
    )
    NUMERIC = frozenset({MEMORY, DECODE, BAND, PREFILL, TTFT, REQUEST, PRICE})

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self._classes: dict[str, str] = {}
        self.this_machine_id: str | None = None
        self._prices: dict[int, Price | None] = {}

    def set_projections(
        self,
        projections: Sequence[Projection],
        classes: dict[str, str],
        this_machine_id: str | None,
        prices: Sequence[Price | None] = (),
    ) -> None:
        self._classes = classes
        self.this_machine_id = this_machine_id
        self._prices = {id(p): price for p, price in zip(projections, prices, strict=False)}
        self.set_rows(projections)

    def price_of(self, p: Projection) -> Price | None:  # as advisor.usecases.prices priced it
        return self._prices.get(id(p))

    def is_this_machine(self, row: int) -> bool:
        return row == 0 and self.this_machine_id is not None

    def display(self, p: Projection, col: int, row: int) -> str:
        if col == self.DEVICE:
            if self.is_this_machine(row):
                return f"{p.device}  (this machine)"
            yours = self.is_yours_unused(p.device_id, p.count)
            return f"{p.device}  (yours, unused here)" if yours else p.device
        if col == self.CLASS:
            return self._classes.get(p.device_id, "")
        if col == self.MEMORY:
            return fmt_gb(p.memory_gb) + (f" x{p.count}" if p.count > 1 else "")
        if col == self.FITS:
            return FIT_WORDS.get(p.fits, p.fits)
        if p.basis == "unsupported" and col != self.BASIS:
            return "not this backend" if col == self.DECODE else "—"
        if p.fits == "no":
            return "does not fit" if col == self.DECODE else "—"
        if p.beyond_context and col not in (self.BASIS, self.PRICE):
            return "beyond its context" if col == self.DECODE else "—"
        if col == self.DECODE:
            return _num(p.per_user_tps, ",.1f")
        if col == self.BAND:
            return fmt_band(*(p.per_user_band() or (None, None)))
        if col == self.PREFILL:
            return _num(p.prefill_tps, ",.0f")
        if col == self.TTFT:
            return fmt_seconds(p.ttft_s)
        if col == self.REQUEST:
            return fmt_seconds(p.request_s)
        if col == self.PRICE:
            return price_cell(self.price_of(p))
        return p.basis

    def sort_key(self, p: Projection, col: int, row: int) -> Any:
        if col in (self.DEVICE, self.CLASS, self.BASIS):
            return self.display(p, col, row).lower()
        if col == self.FITS:
            return -FIT_RANK.get(p.fits, 3)
        if col == self.MEMORY:
            return p.memory_gb * p.count
        value = {
            self.DECODE: p.per_user_tps,
            self.BAND: (p.per_user_band() or (None,))[0],
            self.PREFILL: p.prefill_tps,
            self.TTFT: p.ttft_s,
            self.REQUEST: p.request_s,
            self.PRICE: price.usd if (price := self.price_of(p)) else None,
        }.get(col)
        if value is None:  # unknowns sort last in either direction of the useful order
            return float("-inf") if col in (self.DECODE, self.BAND, self.PREFILL) else float("inf")
        return float(value)

    def tooltip(self, p: Projection, col: int) -> str | None:
        lines = list(p.notes)
        if col in (self.DECODE, self.BAND) and p.decode_ceiling_tps:
            lines.insert(
                0,
                f"Bandwidth ceiling {p.decode_ceiling_tps:,.0f} t/s at "
                f"{p.bandwidth_bytes_per_s / GB:,.0f} GB/s",
            )
        if col == self.PREFILL and p.prefill_tps_low and p.prefill_tps_high:
            ceiling = (f"; compute ceiling {p.prefill_ceiling_tps:,.0f} t/s"
                       if p.prefill_ceiling_tps else "")  # fmt: skip
            lines.insert(
                0, f"Likely range {fmt_band(p.prefill_tps_low, p.prefill_tps_high)} t/s{ceiling}"
            )
        if col == self.PRICE and (price := self.price_of(p)) is not None:
            lines.insert(0, price_text(price))
        if col == self.BASIS:
            lines.insert(
                0,
                BASIS_WORDS.get(p.basis, p.basis)
                + (
                    f" Decode: {p.decode_basis}; prefill: {p.prefill_basis}."
                    if p.decode_basis != p.prefill_basis and p.prefill_basis
                    else ""
                ),
            )
        return "\n".join(lines) or None

    def colour(self, p: Projection, col: int) -> str | None:
        if p.basis == "unsupported":
            return UNSUPPORTED_GREY
        return FIT_COLOURS.get(p.fits) if col == self.FITS else None


UNSUPPORTED_GREY = "#8a8a8a"
BASIS_WORDS = {
    "measured": "From your own benchmark on this device (band: the run's own spread).",
    "published": "From llama.cpp results published for this device (the nearest is in the "
    "notes), carried over to this model.",
    "modelled": "No published results for this device: modelled from its class (similar "
    "devices on the same backend), with a wider band.",
    "spec-only": "From the datasheet alone: no published results for this device or its "
    "class on this backend. Treat it as a rough guide.",
    "unsupported": "This device does not run this llama.cpp backend.",
}


class PinnedFirstRowProxy(QtCore.QSortFilterProxyModel):
    """Sorts and filters, but keeps source row 0 ('this machine') first, always."""

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(QtCore.Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self.pin_first = True
        self.hide_unfit = False
        self._needle = ""  # the filter text, case-folded

    def _refilter(self, change: Callable[[], None]) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt 6.10+: the non-deprecated way
            self.beginFilterChange()
            change()
            self.endFilterChange(QtCore.QSortFilterProxyModel.Direction.Rows)
        else:
            change()
            self.invalidateFilter()

    def set_hide_unfit(self, hide: bool) -> None:
        """Hide devices the model does not fit (this machine always stays)."""
        if hide == self.hide_unfit:
            return  # re-filtering re-sorts every row: only when something changed
        self._refilter(lambda: setattr(self, "hide_unfit", hide))

    def setFilterFixedString(self, pattern: str) -> None:
        """Rows whose text contains `pattern` in any cell, ignoring case, as Qt's own fixed
        string filter on every column does: Qt's asks each cell through Python (30-59 ms a
        keystroke on 260 devices, 2 cores), this one each row's cached text (1-20 ms)."""
        if not isinstance(self.sourceModel(), _Table):
            super().setFilterFixedString(pattern)
            return
        needle = pattern.casefold()
        if needle != self._needle:
            self._refilter(lambda: setattr(self, "_needle", needle))

    def lessThan(self, left: QtCore.QModelIndex, right: QtCore.QModelIndex) -> bool:
        # called n log n times per sort: read the keys straight from the source table
        lrow, rrow = left.row(), right.row()
        if self.pin_first and (lrow == 0 or rrow == 0):
            first_wins = lrow == 0
            ascending = self.sortOrder() == QtCore.Qt.SortOrder.AscendingOrder
            return first_wins if ascending else not first_wins
        source = self.sourceModel()
        if isinstance(source, _Table):
            col = left.column()
            a, b = source.cell_sort_key(lrow, col), source.cell_sort_key(rrow, col)
        else:
            a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)

    def filterAcceptsRow(self, source_row: int, source_parent: QtCore.QModelIndex) -> bool:
        if self.pin_first and source_row == 0:
            return True
        source = self.sourceModel()
        if self.hide_unfit:
            obj = source.index(source_row, 0, source_parent).data(OBJECT_ROLE)
            if getattr(obj, "fits", None) == "no":
                return False
        if isinstance(source, _Table):
            return not self._needle or self._needle in source.row_text(source_row)
        return super().filterAcceptsRow(source_row, source_parent)


class RunsTableModel(_Table):
    """Saved runs, newest first."""

    DATE, MODEL, QUANT, DEVICE, PP, TG, FLAGS, LABEL = range(8)
    HEADERS = ("Date", "Model", "Quant", "Device", "Prefill t/s", "Decode t/s", "Notes", "Label")
    NUMERIC = frozenset({PP, TG})

    def display(self, run: RunResult, col: int, row: int) -> str:
        if col == self.DATE:
            return time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created_at))
        if col == self.MODEL:
            return run.model.name
        if col == self.QUANT:
            return run.model.file_type
        if col == self.DEVICE:
            return run.device_name
        if col == self.PP:
            t = _first(run, "prefill")
            return f"{t.tokens_per_s:,.0f}" if t else "—"
        if col == self.TG:
            t = _first(run, "decode")
            return f"{t.tokens_per_s:,.1f}" if t else "—"
        if col == self.FLAGS:
            flags = []
            if run.busy:
                flags.append("machine was busy")
            if run.noisy:
                flags.append("noisy")
            return ", ".join(flags)
        return run.label

    def sort_key(self, run: RunResult, col: int, row: int) -> Any:
        if col == self.DATE:
            return run.created_at
        if col in (self.PP, self.TG):
            t = _first(run, "prefill" if col == self.PP else "decode")
            return t.tokens_per_s if t else -1.0
        return self.display(run, col, row).lower()

    def tooltip(self, run: RunResult, col: int) -> str | None:
        return "\n".join(run.notes) or None

    def colour(self, run: RunResult, col: int) -> str | None:
        return "#b26a00" if col == self.FLAGS and (run.busy or run.noisy) else None


def _first(run: RunResult, kind: str) -> TestResult | None:
    return next((t for t in run.tests if t.kind == kind and t.depth == 0 and t.batch == 1), None)


class TestsTableModel(_Table):
    """One run's tests with what they mean physically."""

    TEST, TPS, PER_STREAM, BYTES, ACHIEVED, CEILING, EFFICIENCY, ENERGY = range(8)
    HEADERS = (
        "Test",
        "Tokens/s",
        "Per stream",
        "Read per token",
        "Achieved",
        "Ceiling t/s",
        "Of ceiling",
        "Energy per token",
    )
    NUMERIC = frozenset({TPS, PER_STREAM, BYTES, ACHIEVED, CEILING, EFFICIENCY, ENERGY})

    def display(self, t: TestResult, col: int, row: int) -> str:
        if col == self.TEST:
            return describe_test(t)
        if col == self.TPS:
            return f"{t.tokens_per_s:,.1f} ± {t.stddev:,.1f}"
        if col == self.PER_STREAM:
            return f"{t.per_stream_tps:,.1f}" if t.batch > 1 and t.per_stream_tps else ""
        if col == self.BYTES:
            return fmt_bytes(t.bytes_per_token) if t.kind == "decode" and t.bytes_per_token else ""
        if col == self.ACHIEVED:
            if t.kind == "decode" and t.achieved_bandwidth_bytes_per_s:
                return f"{t.achieved_bandwidth_bytes_per_s / GB:,.1f} GB/s"
            return f"{t.achieved_flops_per_s / 1e12:,.2f} TFLOP/s" if t.achieved_flops_per_s else ""
        if col == self.CEILING:
            ceiling = t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps
            return f"{ceiling:,.1f}" if ceiling else "n/a"
        if col == self.ENERGY:
            return energy_text(t)
        return f"{t.efficiency:.0%}" if t.efficiency else "n/a"

    def sort_key(self, t: TestResult, col: int, row: int) -> Any:
        return row

    def tooltip(self, t: TestResult, col: int) -> str | None:
        samples = ", ".join(f"{s:,.1f}" for s in t.samples)
        load = (
            f"\nOther programs used {t.other_cpu_load:.0%} of the CPU meanwhile."
            if t.other_cpu_load
            else ""
        )
        energy = ""
        if t.energy_method:
            energy = f"\nEnergy ({t.energy_method}): {t.energy_source}."
        reps = len(t.samples)
        return f"{t.name}: {reps} repetition{'s' if reps != 1 else ''}, {samples} t/s{load}{energy}"


def energy_text(t: TestResult) -> str:
    """'0.42 J (85 W)', marked '~' and 'est.' when estimated from the TDP; 'not measured' when
    this machine has no power meter and its TDP is unknown."""
    if t.joules_per_token is None or t.average_w is None:
        return "not measured"
    estimate = t.energy_method == "estimate"
    joules = t.joules_per_token
    shown = f"{joules * 1000:,.0f} mJ" if joules < 1 else f"{joules:,.2f} J"
    return f"{'~' if estimate else ''}{shown} ({t.average_w:,.0f} W{' est.' if estimate else ''})"


def describe_test(t: TestResult) -> str:
    """'Prefill, 512-token prompt' / 'Decode 128 tokens at 4,096 depth, 4 streams'."""
    if t.kind == "prefill":
        text = f"Prefill {t.n_prompt:,}-token prompt"
    else:
        text = f"Decode {t.n_gen:,} tokens"
    if t.depth:
        text += f" after {t.depth:,} tokens"
    if t.batch > 1:
        text += f", {t.batch} streams"
    return f"{text} ({t.name})"
