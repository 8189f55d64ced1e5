"""The catalogue's date: the newest date its data records about when something was read."""

from __future__ import annotations

import json
import re

from advisor.core.catalogue.catalogue import load_records
from advisor.core.catalogue.dating import catalogue_date
from advisor.core.infra.paths import bundled


def test_the_shipped_catalogue_is_dated_by_its_newest_reading():
    dated = catalogue_date()
    # a day where a source was read on one, else the month a price was seen
    assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", dated.date)
    street = [r[k] for r in load_records() for k in ("street_price_date", "used_price_date")
              if r.get(k)]  # fmt: skip
    assert all(day <= dated.date for day in street)  # nothing in the data is newer
    snapshot = json.loads((bundled("device_db") / "backend_paths.json").read_text())["snapshot"]
    year = re.search(r"\b(20\d\d) [+-]\d{4}$", snapshot["ggml_commit"]).group(1)
    assert dated.date[:4] >= year  # the backend-path snapshot counts
    assert dated.basis and dated.date in str(dated)


def test_a_newer_street_price_moves_the_date(tmp_path):
    record = {"id": "x-card", "name": "X Card", "street_price_date": "2099-01-02", "sources": []}
    (tmp_path / "x.json").write_text(json.dumps({"devices": [record]}))
    dated = catalogue_date(tmp_path)
    assert dated.date == "2099-01-02" and "X Card" in dated.basis


def test_launch_dates_and_unreadable_snapshots_do_not_count(tmp_path):
    record = {"id": "y", "name": "Y", "launch_price_date": "2100-01", "sources": []}
    (tmp_path / "devices").mkdir()
    (tmp_path / "devices" / "y.json").write_text(json.dumps({"devices": [record]}))
    paths = tmp_path / "backend_paths.json"
    paths.write_text(json.dumps({"snapshot": {"ggml_commit": "abc not a date"}}))
    dated = catalogue_date(tmp_path / "devices", paths)
    assert dated.date == "" and str(dated) == "not recorded"
