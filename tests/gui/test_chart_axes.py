"""The charts' log axes: labels a person can read."""

from __future__ import annotations

import pyqtgraph as pg

from advisor.gui.panels.charts import decade_ticks


def test_a_log_axis_is_labelled_at_whole_powers_of_ten_only(qtbot):
    # the roofline's achieved TFLOP/s on a CPU span 0.004-0.4: pyqtgraph labelled every
    # minor tick of that range and '0.008 0.007 0.006' overprinted one another
    axis = pg.AxisItem("left")
    decade_ticks(axis, [0.0043, 0.19, 0.34])
    major, minor = axis._tickLevels
    assert major == [(-3, "0.001"), (-2, "0.01"), (-1, "0.1"), (0, "1")]
    assert minor == []
    decade_ticks(axis, [0.1, 1e4])
    assert [label for _, label in axis._tickLevels[0]] == [
        "0.1",
        "1",
        "10",
        "100",
        "1,000",
        "10,000",
    ]
