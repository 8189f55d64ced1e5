"""'Benchmark': presets and settings, Run and Cancel, live progress, and the results with what
each number means physically."""

from __future__ import annotations

import time

from advisor.core.infra.units import fmt_seconds
from advisor.core.runs.events import Failure, Progress
from advisor.core.runs.results import RunResult
from advisor.gui.qt import QtCore, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.table_models import TestsTableModel
from advisor.gui.widgets import Card, escape, heading, muted, value_label
from advisor.usecases.run_explanation import explain_run


class BenchPanel(QtWidgets.QWidget):
    run_finished = QtCore.Signal(object)

    def __init__(self, services: AppServices, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.state = services.state
        self.bench = services.bench
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(10)
        layout.addWidget(heading("Benchmark"))
        self.subject = value_label(muted("Choose a model first (Model page)."))
        layout.addWidget(self.subject)
        layout.addWidget(self._build_setup(services.settings.current))
        layout.addLayout(self._build_controls())
        self.live = QtWidgets.QLabel(" ")
        layout.addWidget(self.live)
        self.warning = value_label()
        self.warning.setStyleSheet("color: #b26a00;")
        self.warning.hide()
        layout.addWidget(self.warning)
        layout.addWidget(self._build_results(), 1)
        self._last_progress: Progress | None = None
        self._connect()

    def _build_setup(self, settings) -> Card:
        """The presets, and the advanced settings folded away."""
        setup = Card("What to measure")
        presets = QtWidgets.QHBoxLayout()
        self.quick = QtWidgets.QRadioButton("Quick: prefill 512 tokens, decode 128 tokens")
        self.thorough = QtWidgets.QRadioButton(
            "Thorough: adds decode after 4k/16k/32k tokens of context, and 4 and 16 users at once"
        )
        (self.thorough if settings.bench_preset == "thorough" else self.quick).setChecked(True)
        presets.addWidget(self.quick)
        presets.addWidget(self.thorough)
        presets.addStretch(1)
        setup.body.addLayout(presets)

        # folded away unless asked for: the defaults are what most people want
        self.advanced = QtWidgets.QCheckBox("Advanced settings")
        self.advanced_body = QtWidgets.QWidget()
        self.advanced_body.setVisible(False)
        self.advanced.toggled.connect(self.advanced_body.setVisible)
        grid = QtWidgets.QFormLayout(self.advanced_body)
        grid.setContentsMargins(24, 0, 0, 0)
        self.threads = QtWidgets.QSpinBox()
        self.threads.setRange(0, 256)
        self.threads.setSpecialValueText("auto (performance cores)")
        self.threads.setValue(settings.threads or 0)
        self.gpu_layers = QtWidgets.QSpinBox()
        self.gpu_layers.setRange(-1, 999)
        self.gpu_layers.setSpecialValueText("auto (all when there is a GPU)")
        self.gpu_layers.setValue(-1 if settings.gpu_layers is None else settings.gpu_layers)
        self.cpu_moe = QtWidgets.QSpinBox()
        self.cpu_moe.setRange(0, 999)
        self.cpu_moe.setSpecialValueText("none")
        self.cpu_moe.setToolTip(
            "Mixture-of-experts models on a GPU: keep the experts of the first N layers in "
            "system RAM and the rest on the card (llama.cpp's --n-cpu-moe), for a model "
            "bigger than the card."
        )
        self.reps = QtWidgets.QSpinBox()
        self.reps.setRange(1, 20)
        self.reps.setValue(settings.reps)
        self.reps.setToolTip(
            "At most this many repetitions per test; a test stops earlier (after at least 2) "
            "once its 95% interval is within +-2%."
        )
        self.longest = QtWidgets.QCheckBox("Also find the longest context that loads (up to 60 s)")
        self.flash = QtWidgets.QComboBox()
        for label, value in (("auto", "auto"), ("on", "on"), ("off", "off")):
            self.flash.addItem(label, value)
        self.flash.setCurrentIndex(max(0, self.flash.findData(settings.flash_attn)))
        self.cache = QtWidgets.QComboBox()
        for value in ("f16", "q8_0", "q4_0"):
            self.cache.addItem(value, value)
        self.cache.setCurrentIndex(max(0, self.cache.findData(settings.cache_type)))
        grid.addRow("CPU threads", self.threads)
        grid.addRow("Layers on the GPU", self.gpu_layers)
        grid.addRow("Experts kept in RAM (layers)", self.cpu_moe)
        grid.addRow("Repetitions (at most)", self.reps)
        grid.addRow("Flash attention", self.flash)
        grid.addRow("KV cache type", self.cache)
        grid.addRow("", self.longest)
        setup.body.addWidget(self.advanced)
        setup.body.addWidget(self.advanced_body)
        return setup

    def _build_controls(self) -> QtWidgets.QHBoxLayout:
        controls = QtWidgets.QHBoxLayout()
        self.run_button = QtWidgets.QPushButton("Run benchmark")
        self.run_button.setDefault(True)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        self.anyway_button = QtWidgets.QPushButton("Run skipped tests anyway")
        self.anyway_button.setToolTip(
            "Run the tests the memory check doubted too: llama.cpp may still fit them, or "
            "fail with a message; nothing is lost either way."
        )
        self.anyway_button.hide()
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        controls.addWidget(self.anyway_button)
        controls.addWidget(self.progress, 1)
        return controls

    def _build_results(self) -> Card:
        self.results = Card("Results")
        self.tests_model = TestsTableModel(self)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.tests_model)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setStretchLastSection(True)
        # size columns from the first rows only: measuring hundreds of rows stalls the GUI
        self.table.horizontalHeader().setResizeContentsPrecision(40)
        self.table.setAlternatingRowColors(True)
        self.explanation = value_label()
        self.results.body.addWidget(self.table)
        self.results.body.addWidget(self.explanation)
        return self.results

    def _connect(self) -> None:
        self.run_button.clicked.connect(self._on_run_clicked)
        self.anyway_button.clicked.connect(self._on_anyway_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.bench.started.connect(self._on_bench_started)
        self.bench.progressed.connect(self._on_bench_progressed)
        self.bench.finished.connect(self._on_bench_finished)
        self.bench.failed.connect(self._on_bench_failed)
        self.state.model_changed.connect(self._on_state_changed)
        self.state.machine_changed.connect(self._on_state_changed)
        self.state.run_changed.connect(self._on_state_run_changed)

    # --- slots -------------------------------------------------------------------------

    def _on_state_changed(self) -> None:
        choice, profile = self.state.model, self.state.profile
        if choice is None:
            return
        where = f" on {profile.name} ({profile.backend.upper()})" if profile else ""
        self.subject.setText(f"<b>{choice.label}</b>{where}")

    def _preset(self) -> str:
        return "thorough" if self.thorough.isChecked() else "quick"

    def _on_anyway_clicked(self) -> None:
        self.anyway_button.hide()
        self._start(allow_oversize=True)

    def _on_run_clicked(self) -> None:
        self._start()

    def run(self) -> None:
        """Run the benchmark as the Run button does (another page's 'Measure again')."""
        if self.run_button.isEnabled():
            self._start()

    def _start(self, **extra: object) -> None:
        overrides: dict = dict(extra)
        if self.advanced.isChecked():  # folded away, the settings do not apply
            overrides.update(
                reps=self.reps.value(),
                threads=self.threads.value() or None,
                gpu_layers=None if self.gpu_layers.value() < 0 else self.gpu_layers.value(),
                cpu_moe=self.cpu_moe.value(),
                flash_attn=self.flash.currentData(),
                cache_type=self.cache.currentData(),
                longest_context=self.longest.isChecked(),
            )
        self.services.settings.update(
            bench_preset=self._preset(),
            reps=self.reps.value(),
            threads=self.threads.value() or None,
            gpu_layers=None if self.gpu_layers.value() < 0 else self.gpu_layers.value(),
            flash_attn=self.flash.currentData(),
            cache_type=self.cache.currentData(),
        )
        self.run_button.setEnabled(False)  # one click, one run
        self.services.start_benchmark(self._preset(), on_refused=self._finish_ui, **overrides)

    def _on_cancel_clicked(self) -> None:
        self.cancel_button.setEnabled(False)
        self.progress.setFormat("cancelling…")
        self.bench.cancel()

    def _on_bench_started(self) -> None:
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        # a determinate bar at 0 until the first progress event: Fusion's indeterminate
        # animation redraws hundreds of stripes per frame (100-200 ms of the GUI thread here)
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.progress.setFormat("starting…")
        self.live.setText(" ")
        self.warning.hide()
        self.anyway_button.hide()

    def _on_bench_progressed(self, event: Progress) -> None:
        self._last_progress = event
        if event.total > 0 and event.phase not in ("preparing",):
            self.progress.setRange(0, event.total)
            self.progress.setValue(min(event.step, event.total))
        self.progress.setFormat(event.message or event.phase)
        parts = []
        if event.tokens_per_s:
            parts.append(f"<b>{event.tokens_per_s:,.1f} tokens/s</b> ({event.phase})")
        if event.eta_s:
            parts.append(f"about {fmt_seconds(event.eta_s)} left")
        if parts:
            self.live.setText(" · ".join(parts))

    def _finish_ui(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.setRange(0, 1)

    def _on_bench_finished(self, run: RunResult) -> None:
        # QProgressBar.setValue repaints at once when its text changes (50 ms here, right as
        # the answer is being made): with updates off it only asks for a repaint
        self.progress.setUpdatesEnabled(False)
        self._finish_ui()
        self.progress.setValue(1)
        self.progress.setFormat("done")
        self.progress.setUpdatesEnabled(True)
        self.live.setText(" ")
        # the answer page opens once the run is saved and is the current run, so it never
        # shows, even for a moment, an answer that does not yet count this run
        self.services.save_run(run, lambda: self.run_finished.emit(run))

    def _on_bench_failed(self, failure: Failure) -> None:
        self._finish_ui()
        self.progress.setValue(0)
        self.progress.setFormat("cancelled" if failure.cancelled else "failed")
        self.live.setText(" ")
        if not failure.cancelled:
            self.services.errors.report(failure.message, failure.details)
        if failure.user_error and "anyway" in failure.message:
            self.anyway_button.show()

    def _on_state_run_changed(self) -> None:
        run = self.state.run
        if run is None:
            return
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created_at))
        self.results.setTitle(f"Results: {run.model.name} on {run.device_name}, {when}")
        self.tests_model.set_rows(run.tests)
        self.table.resizeColumnsToContents()
        if run.notes:
            self.warning.setText("<br>".join(run.notes))
            self.warning.show()
        else:
            self.warning.hide()
        self.anyway_button.setVisible(bool(run.skipped_tests) and not self.bench.running)
        self.explanation.setText(_explanation_html(run))


def _explanation_html(run: RunResult) -> str:
    """The run's explanation (advisor.usecases.run_explanation), titles in bold."""
    return "<br>".join(
        (f"<b>{escape(f.title)}</b>: " if f.title else "") + escape(f.text)
        for f in explain_run(run).findings
    )
