"""Saved runs: files written by earlier versions still load, every field typed and checked;
a damaged field is one sentence naming it."""

from __future__ import annotations

import json

import pytest

from advisor.core.infra.serde import DataError
from advisor.core.model.facts import ModelFacts
from advisor.core.runs.results import LlamaInfo, RunHardware, RunResult
from tests.conftest import DATA

# both written by version 0.1.0 (schema 1: model, hardware and llama as free-form objects)
OLD_FILES = ("run-qwen05b-q4_0-xeon.json", "run-llama1b-q4_0-xeon-depth-batch.json")


@pytest.mark.parametrize("name", OLD_FILES)
def test_runs_saved_by_version_0_1_still_load(name):
    data = json.loads((DATA / name).read_text())
    assert data["schema_version"] == 1 and isinstance(data["hardware"], dict)
    run = RunResult.from_json(data)
    assert isinstance(run.model, ModelFacts) and run.model.n_layers == data["model"]["n_layers"]
    assert isinstance(run.hardware, RunHardware)
    assert run.hardware.device_name == data["hardware"]["device_name"]
    assert isinstance(run.llama, LlamaInfo) and run.llama.threads == data["llama"]["threads"]
    assert [t.name for t in run.tests] == [t["name"] for t in data["tests"]]
    assert run.tests[0].tokens_per_s == pytest.approx(data["tests"][0]["tokens_per_s"])
    again = RunResult.from_json(json.loads(json.dumps(run.to_json())))
    assert again == run  # what this version writes, it reads back identically


@pytest.mark.parametrize("name", OLD_FILES)
def test_an_old_run_keeps_its_table_read_and_leaves_the_output_head_out_of_a_prompt(name):
    # saved before the output head and the token table were kept apart
    data = json.loads((DATA / name).read_text())
    assert "output_params" not in data["model"] and "lookup_bytes" not in data["model"]
    facts = RunResult.from_json(data).model
    head = data["model"]["vocab_size"] * data["model"]["n_embd"]
    assert facts.output_params == head  # vocabulary x width, tied or not
    assert facts.lookup_bytes == facts.lookup_params == 0  # tied or not is unknown: still read
    assert facts.step_weights_bytes == data["model"]["active_weights_bytes"]
    assert facts.prompt_flops_per_token(0) == 2 * (data["model"]["active_params"] - head)


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        (("tests", 0, "tokens_per_s"), "fast", "tokens_per_s should be a number"),
        (("tests", 0, "tokens_per_s"), -5.0, "not a finite figure"),
        (("tests", 0, "tokens_per_s"), float("nan"), "not a finite figure"),
        (("tests", 0, "tokens_per_s"), float("inf"), "not a finite figure"),
        (("tests",), "fast", "tests should be a list"),
        (("config", "gpu_layers"), "all", "gpu_layers should be a whole number"),
        (("model", "n_layers"), 2.5, "n_layers should be a whole number"),
        (("tests", 0, "kind"), "sideways", "not prefill or decode"),
        (("id",), None, "id should be text"),
    ],
)
def test_a_damaged_field_is_one_sentence_naming_it(path, value, words):
    data = json.loads((DATA / OLD_FILES[0]).read_text())
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(DataError) as caught:
        RunResult.from_json(data)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_not_an_object_is_refused():
    for data in ([], "run", 3, None):
        with pytest.raises(DataError):
            RunResult.from_json(data)
