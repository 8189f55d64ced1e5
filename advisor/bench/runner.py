"""The measuring loop: llama-bench's method on llama-cpp-python's low-level API.

Mirrors `tools/llama-bench/llama-bench.cpp` of the bundled llama.cpp: random prompt tokens,
prefill in batches of n_batch, decode one token at a time without sampling, a warm-up run,
the KV cache cleared between repetitions, a context per test sized prompt + gen + depth, a
ggml threadpool with llama-bench's settings, and the clock read only after
`llama_synchronize`. Random tokens are drawn before the clock starts, so the timed loop does
nothing per token but the decode call (and, every half second, a progress event).

`run_benchmark` is a generator of typed events: `Progress` while it works, then exactly one
`RunResult` or one `Failure`. It runs inside the child process (see child.py).
"""

from __future__ import annotations

import ctypes
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

from advisor.core.hardware.cpu_threads import performance_core_count
from advisor.core.infra.paths import AppPaths
from advisor.core.model.facts import ModelFacts, facts_from_gguf
from advisor.core.model.gguf_file import InvalidModelError
from advisor.core.model.memory import check_fits
from advisor.core.model.quant import UnknownQuantError
from advisor.core.model.shapes import UnknownShapeError
from advisor.core.runs.results import (
    BenchConfig,
    Failure,
    Progress,
    RunResult,
    TestResult,
    TestSpec,
    finish_run,
    new_run_id,
    summarise_samples,
)

Event = Progress | Failure | RunResult
SideChannel = Callable[[Progress], None]
LIVE_EVERY_S = 0.5
DEFAULT_SYNTH_QUANT = "q4_0"


class BenchError(RuntimeError):
    """The run failed: the message is one sentence for the user, details go with it."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class Cancelled(Exception):
    pass


# -------------------------------------------------------------------------------------------
# the model file
# -------------------------------------------------------------------------------------------


def parse_synthetic(spec: str) -> tuple[str, str]:
    """'llama-3.2-1b:q4_0' -> ('llama-3.2-1b', 'q4_0'); the quantisation defaults to Q4_0."""
    shape, _, quant_label = spec.partition(":")
    return shape.strip(), (quant_label.strip() or DEFAULT_SYNTH_QUANT)


def synthetic_model_path(paths: AppPaths, spec: str, layers: int | None) -> Path:
    from advisor.bench.synth import synthetic_file_name

    shape_id, quant_label = parse_synthetic(spec)
    from advisor.core.model.shapes import get_shape

    shape = get_shape(shape_id)  # validates the name
    return paths.synthetic_models / synthetic_file_name(shape.id, quant_label, layers)


def ensure_synthetic_model(
    paths: AppPaths,
    spec: str,
    layers: int | None,
    cancel: threading.Event,
    side_channel: SideChannel | None = None,
) -> Path:
    """The cached synthetic model for `spec`, written first if it is not there yet."""
    from advisor.bench.synth import write_synthetic_gguf

    path = synthetic_model_path(paths, spec, layers)
    if path.exists():
        try:
            facts_from_gguf(path)
            return path
        except InvalidModelError:
            path.unlink(missing_ok=True)  # a damaged cache entry: write it again
    shape_id, quant_label = parse_synthetic(spec)
    paths.synthetic_models.mkdir(parents=True, exist_ok=True)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if cancel.is_set():
            raise Cancelled()
        now = time.monotonic()
        if side_channel and (now - last[0] > 0.25 or done == total):
            last[0] = now
            side_channel(
                Progress(
                    "writing synthetic model",
                    done,
                    total,
                    message=f"Writing a random-weight {shape_id} ({quant_label}) "
                    f"to the cache: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB",
                )
            )

    write_synthetic_gguf(path, shape_id, quant_label, n_layers=layers, progress=progress)
    return path


# -------------------------------------------------------------------------------------------
# the loop
# -------------------------------------------------------------------------------------------


class _CpuMeter:
    """Share of all CPUs that *other* programs used between start() and stop()."""

    def __init__(self) -> None:
        self._proc = psutil.Process()
        self._n = psutil.cpu_count() or 1

    @staticmethod
    def _busy() -> float:
        t = psutil.cpu_times()
        idle = t.idle + getattr(t, "iowait", 0.0)
        return sum(t) - idle

    def _own(self) -> float:
        c = self._proc.cpu_times()
        return c.user + c.system

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._b0 = self._busy()
        self._o0 = self._own()

    def stop(self) -> float | None:
        wall = time.monotonic() - self._t0
        if wall <= 0.05:
            return None
        other = (self._busy() - self._b0) - (self._own() - self._o0)
        return max(0.0, min(1.0, other / (wall * self._n)))


class _Llama:
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
        if not config.use_mmap:
            params.load_mode = C.LLAMA_LOAD_MODE_NONE
        params.progress_callback = _progress
        t0 = time.perf_counter()
        self.model = C.llama_model_load_from_file(str(path).encode("utf-8"), params)
        self.load_time_s = time.perf_counter() - t0
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

    def new_context(self, config: BenchConfig, n_ctx: int, threads: int, n_seq: int = 1) -> Any:
        C = self.C
        cp = C.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = config.n_batch
        cp.n_ubatch = config.n_ubatch
        cp.n_seq_max = n_seq
        cp.kv_unified = n_seq > 1
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


class _Test:
    """Runs one TestSpec on its own context, like one llama-bench test instance."""

    def __init__(
        self,
        llama: _Llama,
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


# -------------------------------------------------------------------------------------------
# the generator
# -------------------------------------------------------------------------------------------


def _available_memory(backend: dict[str, Any], gpu_layers: int) -> tuple[int | None, str]:
    gpus = [d for d in backend.get("devices", ()) if d.get("type") in ("GPU", "iGPU")]
    if gpu_layers > 0 and gpus:
        dev = gpus[0]
        where = "unified memory" if "metal" in dev.get("name", "").lower() else "VRAM"
        return int(dev.get("memory_free_bytes") or 0) or None, where
    return int(psutil.virtual_memory().available), "RAM"


def _estimated_seconds(
    spec: TestSpec, reps: int, pp_tps: float | None, tg_tps: float | None
) -> float | None:
    if spec.kind == "prefill":
        return (reps + 1) * spec.n_prompt / pp_tps if pp_tps else None
    if not tg_tps:
        return None
    fill = spec.depth / pp_tps if pp_tps and spec.depth else 0.0
    return (reps + 1) * spec.n_gen / tg_tps + fill


def run_benchmark(
    config: BenchConfig,
    *,
    paths: AppPaths,
    cancel: threading.Event | None = None,
    side_channel: SideChannel | None = None,
    hardware: dict[str, Any] | None = None,
) -> Iterator[Event]:
    """Measure a model like llama-bench; yield Progress events, then one RunResult or Failure."""
    cancel = cancel or threading.Event()
    llama: _Llama | None = None
    try:
        # 1. the model file
        if config.synthetic:
            yield Progress("preparing", 0, 1, message="Preparing the synthetic model")
            path = ensure_synthetic_model(
                paths, config.synthetic, config.synthetic_layers, cancel, side_channel
            )
            config = replace(config, model_path=str(path))
        if not config.model_path:
            raise BenchError("No model was given; choose a GGUF file or a built-in shape.")
        facts: ModelFacts = facts_from_gguf(config.model_path)

        # 2. settings and preflight
        from advisor.bench import llama_lib

        backend = llama_lib.backend_info()
        threads = config.threads or performance_core_count()
        gpu_layers = config.gpu_layers
        if gpu_layers is None:
            gpu_layers = 999 if backend["gpu_offload"] else 0
        available, where = _available_memory(backend, gpu_layers)
        streams = max(config.batches or (1,))
        fit = check_fits(
            facts,
            config.max_context_tokens(),
            available,
            streams=streams,
            cache_type=config.cache_type_k,
            where=where,
            allow_oversize=config.allow_oversize,
        )
        if not fit.ok:
            yield Failure(fit.message, "", user_error=True)
            return
        config = replace(config, threads=threads, gpu_layers=gpu_layers)

        # 3. load
        yield Progress("loading", 0, 100, message=f"Loading {Path(config.model_path).name}")
        last = [0.0]

        def on_load(fraction: float) -> None:
            now = time.monotonic()
            if side_channel and now - last[0] > 0.25:
                last[0] = now
                side_channel(
                    Progress(
                        "loading",
                        int(fraction * 100),
                        100,
                        message=f"Loading the model: {fraction:.0%}",
                    )
                )

        llama = _Llama(Path(config.model_path), config, gpu_layers, cancel, on_load)

        # 4. the tests
        specs = config.tests()
        total_steps = len(specs) * (config.reps + (1 if config.warmup else 0))
        step = 0
        rng = random.Random(config.seed)
        depth_cache: dict[int, Any] = {}
        results: list[TestResult] = []
        meter = _CpuMeter()
        pp_tps, tg_tps = config.expected_prefill_tps, config.expected_decode_tps
        threadpool = False
        run_started = time.monotonic()
        for index, spec in enumerate(specs):
            if cancel.is_set():
                raise Cancelled()
            remaining = [_estimated_seconds(s, config.reps, pp_tps, tg_tps) for s in specs[index:]]
            eta = sum(r for r in remaining if r) if all(remaining) else None
            yield Progress(
                spec.name,
                step,
                total_steps,
                eta_s=eta,
                message=f"Test {index + 1} of {len(specs)}: {spec.name}",
            )
            heartbeat = None
            if side_channel is not None and spec.depth:

                def heartbeat(done: int, total: int, spec: TestSpec = spec, at: int = step) -> None:
                    side_channel(
                        Progress(
                            spec.name,
                            at,
                            total_steps,
                            message=f"{spec.name}: filling the context, {done:,} of "
                            f"{total:,} tokens",
                        )
                    )

            test = _Test(llama, config, spec, threads, rng, cancel, depth_cache, heartbeat)
            threadpool = threadpool or test.threadpool_attached
            try:
                if config.warmup:
                    test.warmup()
                    step += 1
                    yield Progress(spec.name, step, total_steps, eta_s=eta, message="warm-up done")
                samples: list[float] = []
                live = None
                if side_channel is not None and spec.kind == "decode":

                    def live(
                        done: int, elapsed: float, spec: TestSpec = spec, at: int = step
                    ) -> None:
                        side_channel(
                            Progress(
                                spec.name,
                                at,
                                total_steps,
                                done / elapsed,
                                message=f"{spec.name}: {done} tokens",
                            )
                        )

                meter.start()
                for rep in range(config.reps):
                    seconds = test.repetition(live)
                    samples.append(seconds)
                    step += 1
                    yield Progress(
                        spec.name,
                        step,
                        total_steps,
                        tokens_per_s=spec.tokens_per_rep / seconds,
                        message=f"{spec.name}: repetition {rep + 1} of {config.reps}",
                    )
                load = meter.stop()
            finally:
                test.close()
            result = summarise_samples(spec, samples, load)
            results.append(result)
            if spec.kind == "prefill" and spec.depth == 0:
                pp_tps = result.tokens_per_s  # measured replaces predicted
            if spec.kind == "decode" and spec.depth == 0 and spec.batch == 1:
                tg_tps = result.tokens_per_s

        llama_info = {
            **{
                k: backend[k]
                for k in ("backends", "gpu_offload", "system_info", "llama_cpp_python_version")
            },
            "devices": list(backend["devices"]),
            "threads": threads,
            "gpu_layers": gpu_layers,
            "threadpool": threadpool,
            "run_seconds": time.monotonic() - run_started,
        }
        run = finish_run(
            new_run_id(),
            config,
            facts,
            results,
            hardware=hardware,
            llama=llama_info,
            load_time_s=llama.load_time_s,
        )
        if fit.message:
            run = replace(run, notes=(*run.notes, fit.message))
        yield run
    except Cancelled:
        yield Failure("The benchmark was cancelled.", cancelled=True)
    except (InvalidModelError, UnknownShapeError, UnknownQuantError) as exc:
        yield Failure(str(exc), user_error=True)
    except BenchError as exc:
        yield Failure(str(exc), exc.details)
    except MemoryError:
        yield Failure("The benchmark ran out of memory; choose a smaller model or context.")
    except OSError as exc:
        yield Failure(f"A file could not be read or written ({exc.strerror or exc}).", repr(exc))
    finally:
        if llama is not None:
            llama.free()
