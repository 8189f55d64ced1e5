"""The handful of llama.cpp calls a benchmark needs: the loaded model, and one test on its own
context, timed like llama-bench.

Mirrors `tools/llama-bench/llama-bench.cpp` of the bundled llama.cpp: random prompt tokens,
prefill in batches of n_batch, decode one token at a time without sampling, the KV cache
cleared between repetitions, a context per test sized prompt + gen + depth, a ggml threadpool
with llama-bench's settings, and the clock read only after `llama_synchronize`. Random
tokens are drawn before the clock starts, so the timed loop does nothing per token but the
decode call (and, every half second, a progress event). Only the child process imports this.
"""

from __future__ import annotations

import ctypes
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.core.infra.errors import RunError
from advisor.core.runs.config import BenchConfig, TestSpec

LIVE_EVERY_S = 0.5
# llama.cpp's routed-expert tensors (common/common.h LLM_FFN_EXPS_REGEX): ffn_up_exps,
# ffn_down_exps, ffn_gate_exps, the fused ffn_gate_up_exps, and the _chexps variants
FFN_EXPS_REGEX = r"\.ffn_(up|down|gate|gate_up)_(ch|)exps"


def cpu_moe_patterns(n_layers: int) -> list[str]:
    r"""The tensor-name patterns llama.cpp's --n-cpu-moe N gives: one per layer il < N,
    `blk\.{il}` + the expert regex (common/common.h llm_ffn_block_regex), each to the CPU
    buffer type. `blk\.1\.ffn` cannot match blk.10: the dot after the number is literal."""
    return [rf"blk\.{il}{FFN_EXPS_REGEX}" for il in range(max(0, n_layers))]


class BenchError(RunError):
    """The run failed: the message is one sentence for the user, details go with it."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class Cancelled(Exception):
    """The user cancelled the run (or the parent went away)."""


class LlamaModel:
    """The loaded model and the handful of llama.cpp calls the loop needs."""

    def __init__(
        self,
        path: Path,
        config: BenchConfig,
        gpu_layers: int,
        cancel: threading.Event,
        on_load: Callable[[float], None],
    ):
        from llama_cpp import llama_cpp as C

        from advisor.bench import llama_lib

        self.C = C
        self.lib = llama_lib
        llama_lib.init_backend()

        @C.llama_progress_callback
        def _progress(fraction: float, user_data: Any) -> bool:
            on_load(float(fraction))
            return not cancel.is_set()

        self._progress_cb = _progress  # keep alive while loading
        params = C.llama_model_default_params()
        params.n_gpu_layers = gpu_layers
        # the override array (and its strings) lives as long as the model: llama.cpp reads it
        # while it loads and keeps the params it was given
        self._overrides = self._cpu_moe_overrides(config.cpu_moe)
        if self._overrides is not None:
            params.tensor_buft_overrides = ctypes.addressof(self._overrides)
        if not config.use_mmap:
            params.load_mode = C.LLAMA_LOAD_MODE_NONE
        if not config.repack and hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False  # plain CPU weights: no AMX, no interleaving
        params.progress_callback = _progress
        llama_lib.take_override_lines()  # only this load's report
        t0 = time.perf_counter()
        self.model = C.llama_model_load_from_file(str(path).encode("utf-8"), params)
        self.load_time_s = time.perf_counter() - t0
        # llama.cpp's report of each tensor an override moved, e.g. "tensor
        # blk.0.ffn_up_exps.weight (12 MiB q4_0) buffer type overridden to CPU"
        self.overridden = tuple(llama_lib.take_override_lines())
        if not self.model:
            if cancel.is_set():
                raise Cancelled()
            raise BenchError(
                "llama.cpp could not load the model; the file may be damaged, of an unsupported "
                "kind, or too large for this machine's memory.",
                llama_lib.recent_log(),
            )
        self.vocab = C.llama_model_get_vocab(self.model)
        self.n_vocab = C.llama_vocab_n_tokens(self.vocab)
        self.add_bos = bool(C.llama_vocab_get_add_bos(self.vocab))
        self.bos = C.llama_vocab_bos(self.vocab)

    def _cpu_moe_overrides(self, cpu_moe: int) -> Any:
        """The --n-cpu-moe overrides for llama_model_params, or None for none."""
        if cpu_moe <= 0:
            return None
        buft = self.lib.cpu_buffer_type()
        if buft is None:
            raise BenchError(
                "This llama.cpp build does not export its CPU buffer type, so the experts "
                "cannot be kept in RAM; run without --cpu-moe."
            )
        return self.lib.buffer_overrides(cpu_moe_patterns(cpu_moe), buft)

    def new_context(self, config: BenchConfig, n_ctx: int, threads: int, n_seq: int = 1) -> Any:
        C = self.C
        cp = C.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = config.n_batch
        cp.n_ubatch = config.n_ubatch
        cp.n_seq_max = n_seq
        # one KV cache per stream, as llama-batched-bench does by default (no -kvu): llama.h
        # advises a unified cache only for sequences that share a prompt
        cp.kv_unified = False
        cp.n_threads = threads
        cp.n_threads_batch = threads
        cp.type_k = self.lib.KV_CACHE_TYPES[config.cache_type_k]
        cp.type_v = self.lib.KV_CACHE_TYPES[config.cache_type_v]
        cp.flash_attn_type = self.lib.FLASH_ATTN[config.flash_attn]
        cp.offload_kqv = True
        cp.embeddings = False
        cp.swa_full = False
        ctx = C.llama_init_from_model(self.model, cp)
        if not ctx:
            raise BenchError(
                f"llama.cpp could not create a context of {n_ctx:,} tokens; there is probably "
                "not enough memory for its KV cache. Try a smaller depth or batch.",
                self.lib.recent_log(),
            )
        return ctx

    def free(self) -> None:
        if self.model:
            self.C.llama_model_free(self.model)
            self.model = None


class BenchTest:
    """Runs one TestSpec on its own context, like one llama-bench test instance."""

    def __init__(
        self,
        llama: LlamaModel,
        config: BenchConfig,
        spec: TestSpec,
        threads: int,
        rng: random.Random,
        cancel: threading.Event,
        depth_cache: dict[int, Any],
        heartbeat: Callable[[int, int], None] | None = None,
    ):
        self.L = llama
        # filling a deep context is untimed but can take minutes on a CPU: say how far it is,
        # so the app (and its watchdog) know llama.cpp is working
        self.heartbeat = heartbeat
        self.C = llama.C
        self.spec = spec
        self.cancel = cancel
        self.rng = rng
        self.n_batch = config.n_batch
        self.depth_cache = depth_cache
        # exactly llama-bench's context: prompt + generated + depth tokens (per stream)
        n_ctx = max(1, (spec.n_prompt + spec.n_gen + spec.depth) * spec.batch)
        self.ctx = llama.new_context(config, n_ctx, threads, n_seq=spec.batch)
        self.mem = self.C.llama_get_memory(self.ctx)
        self.pool = llama.lib.new_threadpool(threads)
        self.threadpool_attached = llama.lib.attach_threadpool(self.ctx, self.pool)
        self.C.llama_set_n_threads(self.ctx, threads, threads)

    def close(self) -> None:
        if self.ctx:
            self.C.llama_free(self.ctx)
            self.ctx = None
        if self.pool:
            self.pool.free()

    # --- helpers ------------------------------------------------------------------------

    def _tokens(self, n: int, first_bos: bool) -> Any:
        arr = (ctypes.c_int32 * max(n, 1))()
        randrange, n_vocab = self.rng.randrange, self.L.n_vocab
        for i in range(n):
            arr[i] = randrange(n_vocab)
        if n and first_bos and self.L.add_bos:
            arr[0] = self.L.bos
        return arr

    def _decode(self, batch: Any) -> None:
        rc = self.C.llama_decode(self.ctx, batch)
        if rc != 0:
            raise BenchError(
                f"llama.cpp failed to process a batch (code {rc}); the context may be too small "
                "or memory ran out.",
                self.L.lib.recent_log(),
            )

    def _prompt(
        self, tokens: Any, n: int, heartbeat: Callable[[int, int], None] | None = None
    ) -> None:
        """Prefill n tokens in batches of n_batch, then wait for the backend. `heartbeat`
        (done, n) is called between batches: only for untimed fills, never in a timed test."""
        C, done, n_batch = self.C, 0, self.n_batch
        base = ctypes.addressof(tokens)
        while done < n:
            chunk = min(n - done, n_batch)
            ptr = ctypes.cast(base + 4 * done, ctypes.POINTER(ctypes.c_int32))
            self._decode(C.llama_batch_get_one(ptr, chunk))
            done += chunk
            if self.cancel.is_set():
                raise Cancelled()
            if heartbeat is not None:
                heartbeat(done, n)
        C.llama_synchronize(self.ctx)

    def _prepare_depth(self) -> None:
        """Fill the KV cache with `depth` tokens (untimed), reusing a saved state when possible."""
        C, depth = self.C, self.spec.depth
        cached = self.depth_cache.get(depth)
        if cached is not None and self.spec.batch == 1:
            buf, size = cached
            if C.llama_state_seq_set_data(self.ctx, buf, size, 0) != 0:
                return
        for seq in range(self.spec.batch):
            tokens = self._tokens(depth, first_bos=True)
            if seq == 0:
                self._prompt(tokens, depth, self.heartbeat)
            else:  # the other streams share the same history
                C.llama_memory_seq_cp(self.mem, 0, seq, -1, -1)
        if self.spec.batch == 1:
            size = C.llama_state_seq_get_size(self.ctx, 0)
            buf = (ctypes.c_uint8 * size)()
            C.llama_state_seq_get_data(self.ctx, buf, size, 0)
            self.depth_cache[depth] = (buf, size)

    # --- the timed parts ----------------------------------------------------------------

    def run_prompt(self) -> float:
        tokens = self._tokens(self.spec.n_prompt, first_bos=True)
        t0 = time.perf_counter_ns()
        self._prompt(tokens, self.spec.n_prompt)
        return (time.perf_counter_ns() - t0) / 1e9

    def run_gen(self, n_gen: int, live: Callable[[int, float], None] | None) -> float:
        C, ctx, cancel = self.C, self.ctx, self.cancel
        drawn = self._tokens(n_gen, first_bos=True)
        one = (ctypes.c_int32 * 1)()
        batch = C.llama_batch_get_one(one, 1)  # positions follow the KV cache
        decode, synchronize = C.llama_decode, C.llama_synchronize
        perf = time.perf_counter_ns
        next_live = perf() + int(LIVE_EVERY_S * 1e9)
        t0 = perf()
        for i in range(n_gen):
            one[0] = drawn[i]
            rc = decode(ctx, batch)
            synchronize(ctx)
            if rc != 0:
                self._decode(batch)  # raises with the details
            if cancel.is_set():
                raise Cancelled()
            if live is not None and perf() > next_live:
                live(i + 1, (perf() - t0) / 1e9)
                next_live = perf() + int(LIVE_EVERY_S * 1e9)
        return (perf() - t0) / 1e9

    def run_batched(self, n_gen: int, live: Callable[[int, float], None] | None) -> float:
        """B streams decoding together: each step is one batch with a token per stream."""
        C, B = self.C, self.spec.batch
        start = C.llama_memory_seq_pos_max(self.mem, 0) + 1
        batch = C.llama_batch_init(B, 0, 1)
        try:
            drawn = [self._tokens(B, first_bos=False) for _ in range(n_gen)]
            batch.n_tokens = B
            for s in range(B):
                batch.pos[s] = start
                batch.n_seq_id[s] = 1
                batch.seq_id[s][0] = s
                batch.logits[s] = True
            decode, synchronize, ctx = C.llama_decode, C.llama_synchronize, self.ctx
            token_ptr, pos_ptr = batch.token, batch.pos
            perf = time.perf_counter_ns
            next_live = perf() + int(LIVE_EVERY_S * 1e9)
            t0 = perf()
            for step in range(n_gen):
                ctypes.memmove(token_ptr, drawn[step], 4 * B)
                for s in range(B):
                    pos_ptr[s] = start + step
                rc = decode(ctx, batch)
                synchronize(ctx)
                if rc != 0:
                    self._decode(batch)
                if self.cancel.is_set():
                    raise Cancelled()
                if live is not None and perf() > next_live:
                    live((step + 1) * B, (perf() - t0) / 1e9)
                    next_live = perf() + int(LIVE_EVERY_S * 1e9)
            return (perf() - t0) / 1e9
        finally:
            C.llama_batch_free(batch)

    def warmup(self) -> None:
        if self.spec.kind == "prefill":
            self.run_prompt()
        elif self.spec.batch > 1:
            self.run_batched(1, None)
        else:
            self.run_gen(1, None)
        self.C.llama_memory_clear(self.mem, False)

    def repetition(self, live: Callable[[int, float], None] | None) -> float:
        self.C.llama_memory_clear(self.mem, False)
        if self.spec.depth:
            self._prepare_depth()
        if self.spec.kind == "prefill":
            return self.run_prompt()
        if self.spec.batch > 1:
            return self.run_batched(self.spec.n_gen, live)
        return self.run_gen(self.spec.n_gen, live)
