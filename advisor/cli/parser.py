"""The command line's options. Numbers are taken as typed and checked by the same validators
the app uses (advisor.core.infra.validate), so every refusal is one sentence with the range."""

from __future__ import annotations

import argparse
from typing import NoReturn

from advisor.core.infra.errors import InputError


class Parser(argparse.ArgumentParser):
    """argparse, with a mistake as one sentence (exit status 2), not a usage dump."""

    def error(self, message: str) -> NoReturn:
        raise InputError(f"{message} (see '{self.prog} --help')")


def _json_parent() -> argparse.ArgumentParser:
    """--json, declared once and shared by every command."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--json", action="store_true", help="machine-readable output (SI units, stable keys)"
    )
    return parent


def build_parser() -> argparse.ArgumentParser:
    """The `advisor` command and its sub-commands."""
    p = Parser(
        prog="advisor",
        description="LLM Hardware Advisor: what limits your LLM speed, "
        "and what an upgrade would buy. Without a command, opens the app.",
    )
    p.add_argument("--version", action="store_true", help="the versions of everything inside")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    js = _json_parent()

    g = sub.add_parser("gui", help="open the app (optionally with a model chosen)")
    g.add_argument("model", nargs="?", help="a .gguf file to open")

    t = sub.add_parser("detect", parents=[js], help="this machine's hardware (+ RAM bandwidth)")
    t.add_argument("--no-probe", action="store_true", help="skip the memory bandwidth test")

    i = sub.add_parser("inspect", parents=[js], help="model facts from a GGUF header")
    i.add_argument("model", help="path to a .gguf file")

    sub.add_parser("shapes", parents=[js], help="built-in model shapes and their sizes")

    d = sub.add_parser("devices", parents=[js], help="the device catalogue")
    d.add_argument("--search", metavar="TEXT", help="only devices matching TEXT, best first")

    y = sub.add_parser("synth", parents=[js], help="write a random-weight GGUF of a real shape")
    y.add_argument("out", help="the .gguf file to write")
    y.add_argument("--shape", required=True, help="a built-in shape (see 'advisor shapes')")
    y.add_argument("--quant", default="q4_0", help="quantisation, e.g. q4_0, q4_k_m, q8_0, f16")
    y.add_argument("--layers", help="fewer layers than the real model, for quick tests")
    y.add_argument("--force", action="store_true", help="replace an existing file")

    _project_parser(sub.add_parser("project", parents=[js], help="predict your model's speed"))
    u = sub.add_parser(
        "upgrade", parents=[js], help="would another card pay off? (the app's answer)"
    )
    u.add_argument("--result", help="a saved run (default: your newest run in the history)")
    u.add_argument("--budget", help="the most you would spend, US dollars (default: the app's)")
    u.add_argument("--workload", help="chat (default: the app's choice), summarise, long-chat, ...")
    u.add_argument(
        "--more",
        action="store_true",
        help="also workstation and datacenter cards, regional variants and cards without a "
        "current price (the page's toggle)",
    )
    _bench_parser(sub.add_parser("bench", parents=[js], help="measure a model like llama-bench"))
    f = sub.add_parser("fits", parents=[js], help="which built-in models run on a device, how fast")
    f.add_argument("--device", help="a catalogued device (default: this machine)")
    f.add_argument("--backend", help="llama.cpp backend (default: the device's usual one)")
    f.add_argument("--min-tps", help="only models decoding at least this many tokens/s per user")
    f.add_argument("--workload", help="chat (default), summarise, long-chat, many-users, ...")
    for name in ("prompt", "answer", "depth", "concurrency"):
        f.add_argument(f"--{name}", help=argparse.SUPPRESS)
    _workload_parser(sub.add_parser("workload", help="import your own traffic; size for it"), js)
    return p


def _workload_parser(w: argparse.ArgumentParser, js: argparse.ArgumentParser) -> None:
    ws = w.add_subparsers(dest="workload_command", parser_class=Parser)
    i = ws.add_parser("import", parents=[js], help="a chat export or server log as a workload")
    i.add_argument("file", help="llama-server log, OpenAI-style JSONL, ChatGPT / Open WebUI / "
                   "LM Studio export")  # fmt: skip
    i.add_argument("--name", help="save it under this name (default: the file's name)")
    i.add_argument("--format", help="the file's format, when detection should be overruled")
    i.add_argument("--model", help="a .gguf file: count tokens with its own tokenizer")
    ws.add_parser("list", parents=[js], help="the saved workloads")
    d = ws.add_parser("delete", parents=[js], help="forget a saved workload")
    d.add_argument("name")
    z = ws.add_parser("size", parents=[js], help="how many cards serve a workload's peak")
    z.add_argument("name", help="a saved workload or a preset")
    z.add_argument("--device", help="the card to count (e.g. 'RTX 4090')")
    z.add_argument("--model", help="a .gguf file (its header is read)")
    z.add_argument("--shape", help="a built-in shape (default llama-3.1-8b)")
    z.add_argument("--quant", help="quantisation of the shape (default q4_k_m)")
    z.add_argument("--ttft", help="95th-percentile time to first token, seconds (default 2)")
    z.add_argument("--min-tps", help="decode tokens/s each user needs (default 10)")
    z.add_argument("--peak", help="people at once to size for (default: the workload's peak)")


def _project_parser(j: argparse.ArgumentParser) -> None:
    src = j.add_argument_group("the model")
    src.add_argument("--model", help="a .gguf file (its header is read, not its weights)")
    src.add_argument("--shape", help="a built-in shape instead of a file (see 'advisor shapes')")
    src.add_argument("--quant", help="quantisation of the shape (default q4_k_m)")
    ref = j.add_argument_group("your measurement (optional)")
    ref.add_argument("--from-device", help="the device you measured on")
    ref.add_argument("--from-tg", help="your measured decode tokens/s (tg128)")
    ref.add_argument("--from-pp", help="your measured prefill tokens/s (pp512)")
    ref.add_argument("--from-backend", help="the backend you measured with")
    ref.add_argument("--result", help="a run saved by 'advisor bench --json' or exported")
    j.add_argument(
        "--to",
        action="append",
        metavar="NAME",
        help="a target device, e.g. 'RTX 4090' or '2x RTX 3090' (repeatable; "
        "default: every catalogued device)",
    )
    j.add_argument("--backend", help="cpu, cuda, metal, rocm, vulkan or sycl (default: usual)")
    j.add_argument(
        "--memory-gb",
        help="a memory size the targets come with (without --to: the devices that do)",
    )
    wl = j.add_argument_group("the workload")
    wl.add_argument(
        "--workload", help="chat, summarise, long-chat, many-users, coding-agent, custom"
    )
    wl.add_argument("--depth", help="tokens of history already in the KV cache")
    wl.add_argument("--prompt", help="prompt tokens (custom workload)")
    wl.add_argument("--answer", help="answer tokens (custom workload)")
    wl.add_argument("--concurrency", help="users at once")
    hw = j.add_argument_group(
        "the computer the card goes in (default: this one, or the one --result ran on)"
    )
    hw.add_argument("--ram-gb", help="its system RAM in GB")
    hw.add_argument(
        "--ram-bandwidth-gbs",
        help="its RAM's measured read bandwidth in GB/s (as 'advisor detect' reports it)",
    )
    hw.add_argument("--ram-speed", help="its memory, when nothing was measured, e.g. DDR5-4800")
    hw.add_argument("--ram-channels", help="memory channels filled (with --ram-speed; default 2)")
    hw.add_argument(
        "--pcie-gbs", help="the card's host link in GB/s (default: detected, else 4.0 x16)"
    )
    pl = j.add_argument_group("where the model's tensors go (default: the fastest that fits)")
    pl.add_argument(
        "--cpu-moe", help="keep the experts of the first N layers in system RAM (--n-cpu-moe N)"
    )
    pl.add_argument("--gpu-layers", help="layers on the card(s), the last ones (-ngl N)")
    pl.add_argument("--ubatch", help="tokens per prompt micro-batch (-ub, default 512)")


def _bench_parser(b: argparse.ArgumentParser) -> None:
    b.add_argument("model", nargs="?", help="a .gguf file")
    b.add_argument(
        "--synthetic",
        metavar="SHAPE[:QUANT]",
        help="a random-weight model of a built-in shape, e.g. llama-3.2-1b:q4_0",
    )
    b.add_argument("--layers", help="fewer layers for a synthetic model (quick runs)")
    b.add_argument("--pp", default="512", help="prompt sizes to prefill, e.g. 512 or 128,512")
    b.add_argument("--tg", default="128", help="tokens to generate, e.g. 128")
    b.add_argument(
        "--reps",
        default="5",
        help="at most this many repetitions per test (default 5; fewer once the 95%% "
        "interval is within +-2%%, at least 2)",
    )
    b.add_argument(
        "--fixed-reps", action="store_true", help="always run --reps repetitions, like llama-bench"
    )
    b.add_argument("--depth", default="0", help="context depths for decode, e.g. 0,4096")
    b.add_argument("--batch", default="1", help="concurrent streams for decode, e.g. 1,4,16")
    b.add_argument("--threads", help="CPU threads (default: llama-bench's for this machine)")
    b.add_argument("--gpu-layers", help="layers on the GPU (default: all, if any GPU)")
    b.add_argument(
        "--cpu-moe",
        metavar="N",
        help="keep the experts of the first N layers in system RAM, the rest on the GPU "
        "(llama.cpp's --n-cpu-moe; mixture-of-experts models)",
    )
    b.add_argument("--batch-size", default="2048", help="llama.cpp n_batch")
    b.add_argument("--ubatch-size", default="512", help="llama.cpp n_ubatch")
    b.add_argument("--flash-attn", choices=("auto", "on", "off"), default="auto")
    b.add_argument(
        "--cache-type", choices=("f16", "q8_0", "q4_0"), default="f16", help="KV cache type"
    )
    b.add_argument("--no-warmup", action="store_true")
    b.add_argument(
        "--allow-oversize",
        action="store_true",
        help="run the tests preflight thinks do not fit in free memory too",
    )
    b.add_argument(
        "--longest-context",
        action="store_true",
        help="also find the longest context that loads here (trial allocation, up to 60 s)",
    )
    b.add_argument("--no-save", action="store_true", help="do not add the run to the history")
    b.add_argument("--label", help="a label for the run in the history")
    b.add_argument(
        "--watchdog",
        default="300",
        help="seconds without progress before the run is stopped (default 300)",
    )
    b.add_argument("--quiet", action="store_true", help="no progress line")
    b.add_argument("--verbose", action="store_true", help="llama.cpp's log on failure")
