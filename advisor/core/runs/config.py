"""What a benchmark measures and how: llama-bench's settings, the tests they mean, the presets.

`BenchConfig` crosses from the app to the benchmark child process as JSON; `tests()` turns it
into the list of tests in the order llama-bench runs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.infra.serde import from_json, to_json

DEFAULT_SYNTH_QUANT = "q4_0"

# the benchmark presets the app offers (the CLI takes any lists)
PRESETS: dict[str, dict[str, tuple[int, ...]]] = {
    "quick": {"n_prompt": (512,), "n_gen": (128,), "depths": (0,), "batches": (1,)},
    "thorough": {
        "n_prompt": (512,),
        "n_gen": (128,),
        "depths": (0, 4096, 16384, 32768),
        "batches": (1, 4, 16),
    },
}


def parse_synthetic(spec: str) -> tuple[str, str]:
    """'llama-3.2-1b:q4_0' -> ('llama-3.2-1b', 'q4_0'); the quantisation defaults to Q4_0."""
    shape, _, quant_label = spec.partition(":")
    return shape.strip(), (quant_label.strip() or DEFAULT_SYNTH_QUANT)


@dataclass(frozen=True)
class BenchConfig:
    """What to measure and how: llama-bench's settings, plus the machine facts for explaining."""

    model_path: str | None = None
    synthetic: str | None = None  # "llama-3.2-1b:q4_0": a random-weight model of that shape
    synthetic_layers: int | None = None
    n_prompt: tuple[int, ...] = (512,)
    n_gen: tuple[int, ...] = (128,)
    depths: tuple[int, ...] = (0,)
    batches: tuple[int, ...] = (1,)
    reps: int = 5  # at most this many (llama-bench's default); adaptive: fewer when tight
    adaptive_reps: bool = True  # stop once the 95% interval is within +-2% (at least 2)
    threads: int | None = None  # None: llama-bench's default for this machine
    gpu_layers: int | None = None  # None: all layers when a GPU backend exists, else 0
    # llama.cpp's --n-cpu-moe: the routed experts of the first N layers stay in system RAM,
    # the rest of the model on the card (0: none; needs a GPU and a mixture-of-experts model)
    cpu_moe: int = 0
    n_batch: int = 2048
    n_ubatch: int = 512
    flash_attn: str = "auto"  # "auto" | "on" | "off"
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    warmup: bool = True
    use_mmap: bool = True
    # llama.cpp's repacked CPU weights (AMX tiles on Intel Xeons, interleaved blocks for
    # AVX2 and Arm): on by default, as in llama-bench; off on a build with AMX, whose kernels
    # crash on some Xeons (runner.py), and after a crash in them (controller.py)
    repack: bool = True
    allow_oversize: bool = False  # run tests preflight doubts (the app's "Run anyway")
    # find the longest context that loads (trial allocation, model loaded once, time budget)
    longest_context: bool = False
    longest_context_budget_s: float = 60.0
    seed: int = 1234
    # machine facts used to explain the numbers (filled by the parent from detection)
    device_name: str | None = None
    bandwidth_spec_bytes_per_s: float | None = None
    bandwidth_measured_bytes_per_s: float | None = None
    peak_flops_per_s: float | None = None
    # predicted speeds, so the first progress events can already say how long a run takes
    expected_prefill_tps: float | None = None
    expected_decode_tps: float | None = None

    def __post_init__(self) -> None:
        for name in ("n_prompt", "n_gen", "depths", "batches"):
            object.__setattr__(self, name, tuple(int(v) for v in getattr(self, name)))
        if self.cpu_moe < 0:
            raise ValueError(f"cpu_moe counts layers and cannot be negative, not {self.cpu_moe}")

    def to_json(self) -> dict[str, Any]:
        return dict(to_json(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchConfig:
        return from_json(cls, data, "the benchmark settings")

    def max_context_tokens(self) -> int:
        """The largest context any test needs (prompt + generated + depth), per stream."""
        return max((s.context_tokens for s in self.tests()), default=0) + 1

    def tests(self) -> list[TestSpec]:
        """The tests this config runs, in order: prefill, decode, decode at depth, batched."""
        out: list[TestSpec] = []
        for d in self.depths:
            for p in self.n_prompt:
                if p > 0:
                    out.append(TestSpec("prefill", p, 0, d, 1))
        for d in self.depths:
            for g in self.n_gen:
                if g > 0:
                    out.append(TestSpec("decode", 0, g, d, 1))
        for b in self.batches:
            if b > 1:
                for g in self.n_gen:
                    if g > 0:
                        out.append(TestSpec("decode", 0, g, 0, b))
        return out


@dataclass(frozen=True)
class TestSpec:
    """One test: a prefill of n_prompt or a decode of n_gen tokens, after `depth`, B streams."""

    __test__ = False  # not a pytest test class

    kind: str  # "prefill" | "decode"
    n_prompt: int
    n_gen: int
    depth: int
    batch: int

    @property
    def name(self) -> str:
        base = f"pp{self.n_prompt}" if self.kind == "prefill" else f"tg{self.n_gen}"
        if self.batch > 1:
            base += f"x{self.batch}"
        if self.depth:
            base += f"@d{self.depth}"
        return base

    @property
    def tokens_per_rep(self) -> int:
        return self.n_prompt if self.kind == "prefill" else self.n_gen * self.batch

    @property
    def context_tokens(self) -> int:
        """Tokens the KV cache holds per stream by the end of the test (llama-bench's n_ctx)."""
        return self.n_prompt + self.n_gen + self.depth
