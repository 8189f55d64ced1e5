"""`advisor bench`'s options as typed become a checked configuration the child accepts."""

from __future__ import annotations

import pytest

from advisor.core.infra.errors import InputError
from advisor.core.runs.config import BenchConfig
from advisor.usecases.bench_config import BenchChoices, bench_config


def test_layers_typed_on_the_command_line_reach_the_child_as_a_number():
    # `advisor bench --synthetic qwen2.5-0.5b:q4_0 --layers 2` passed '2' through, and the
    # child refused the request as malformed ("should be a whole number, not '2'")
    config, facts = bench_config(BenchChoices(synthetic="qwen2.5-0.5b:q4_0", synthetic_layers="2"))
    assert config.synthetic_layers == 2 and facts.n_layers == 2
    # the child reads the request back from JSON: a round trip keeps it valid
    assert BenchConfig.from_json(config.to_json()).synthetic_layers == 2


@pytest.mark.parametrize("bad", ["0", "-1", "2.5", "nan", "inf", "lots", "100000"])
def test_a_layer_count_out_of_range_is_one_sentence(bad):
    with pytest.raises(InputError, match="--layers"):
        bench_config(BenchChoices(synthetic="qwen2.5-0.5b:q4_0", synthetic_layers=bad))
