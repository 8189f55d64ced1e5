"""llama.cpp's llama-server log: one request per task, timed by its slot lines.

Lines read (tools/server, `SLT_INF` prefixes every slot line with
"slot <func, 12 chars>: id <slot> | task <task> | "):
- "slot launch_slot_: id  0 | task 5 | processing task" - a request starts on a slot;
- "slot update_slots: id  0 | task 5 | new prompt, n_ctx_slot = 4096, n_keep = 0,
  task.n_tokens = 120" (older: "n_prompt_tokens = 120") - the whole prompt;
- "prompt eval time = 38.03 ms / 11 tokens (...)", "eval time = ... ms / 64 tokens (...)",
  "total time = ... ms / 75 tokens" - printed by print_timings, each with the slot prefix in
  current versions, or as bare lines after one "slot print_timing: id 0 | task 5 |" line in
  older ones; prompt eval counts only the tokens not already in the slot's cache;
- "slot      release: id  0 | task 5 | stop processing: n_tokens = 74, truncated = 0" - done.
With --log-timestamps (and --log-prefix) a line starts "M.SS.mmm.uuu I ", minutes, seconds,
milliseconds and microseconds since the server started; without it requests have no times
and only the order of launch and release lines shows how many ran at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from advisor.core.traffic.records import Turn
from advisor.core.traffic.streaming import ReadContext, iter_lines

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PREFIX = re.compile(r"^(?:(\d+)\.(\d{2})\.(\d{3})\.(\d{3}) )?(?:[IWEDT] )?")
_SLOT = re.compile(r"^slot\s+(\S+?):\s+id\s+(\d+)\s+\|\s+task\s+(-?\d+)\s+\|\s?(.*)$")
_TIMING = re.compile(
    r"^\s*(prompt eval|eval|total) time\s*=\s*([\d.]+)\s*ms\s*/\s*(\d+)\s*(?:tokens|runs)"
)
_N_PROMPT = re.compile(r"(?:n_prompt_tokens|task\.n_tokens)\s*=\s*(\d+)")
MAX_DIGITS = 15  # no token count, slot, task or minute in a real log needs more


def _whole(text: str | None) -> int:
    """A whole number from the log; ValueError for one longer than any real log writes (the
    line is then skipped as malformed)."""
    if text is None:
        return 0
    if len(text) > MAX_DIGITS:
        raise ValueError("a number longer than any real log writes")
    return int(text)


@dataclass
class _Task:
    start_s: float | None
    concurrent: int
    n_prompt: int | None = None
    prompt_eval: int | None = None
    generated: int | None = None
    timed: bool = False  # the "total time" line was seen
    end_s: float | None = None
    released: bool = False


class _LogState:
    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx
        self.tasks: dict[int, _Task] = {}
        self.running = 0
        self.timing_task: int | None = None
        self.cut_off: set[int] = set()  # tasks seen without their launch (log began later)
        self.offset_s = 0.0
        self.last_s = 0.0

    def clock(self, groups: tuple[str | None, ...]) -> float | None:
        if groups[0] is None:
            return None
        m, s, ms, us = (_whole(g) for g in groups)
        t = m * 60 + s + ms / 1e3 + us / 1e6
        if t + 1.0 < self.last_s - self.offset_s:  # the server restarted: times start again
            self.offset_s = self.last_s
        self.last_s = t + self.offset_s
        return self.last_s

    def timing(self, task_id: int | None, match: re.Match[str]) -> Turn | None:
        task = self.tasks.get(task_id) if task_id is not None else None
        if task_id is None:
            self.ctx.skip()  # a bare timing line with no slot line before it
            return None
        if task is None:
            self.cut_off.add(task_id)
            return None
        kind, n = match.group(1), _whole(match.group(3))
        if kind == "prompt eval":
            task.prompt_eval = n
        elif kind == "eval":
            task.generated = n
        else:
            task.timed = True
        return self.finish(task_id) if task.timed and task.released else None

    def finish(self, task_id: int) -> Turn | None:
        task = self.tasks.pop(task_id)
        if task.prompt_eval is None and task.generated is None:
            return None  # cancelled before any timing was printed
        prompt = task.prompt_eval or 0
        cached = max(task.n_prompt - prompt, 0) if task.n_prompt is not None else 0
        return Turn(
            conversation_id="",
            turn_index=task_id,
            start_s=task.start_s,
            end_s=task.end_s,
            prompt_tokens=prompt,
            answer_tokens=task.generated or 0,
            history_tokens=cached,
            counts_exact=True,
            concurrent_at_start=task.concurrent,
        )


def read_turns(fh: IO[bytes], ctx: ReadContext) -> Iterator[Turn]:
    """One turn per finished task (request); timing lines that fit no task are skipped."""
    state = _LogState(ctx)
    for raw in iter_lines(fh, ctx):
        try:
            turn = _line(state, _ANSI.sub("", raw).rstrip("\r\n"))
        except ValueError:  # a number no real log writes (5,000 digits): a malformed line
            ctx.skip()
            continue
        if turn is not None:
            yield turn
    for task_id in [k for k, t in state.tasks.items() if t.released]:
        turn = state.finish(task_id)
        if turn is not None:
            yield turn
    partial = len(state.cut_off) + len(state.tasks)
    if partial:
        what = "1 request" if partial == 1 else f"{partial} requests"
        ctx.notes.append(f"{what} cut off by the start or end of the log were left out.")


def _line(state: _LogState, line: str) -> Turn | None:
    """What one line of the log adds: a finished request, or nothing yet."""
    prefix = _PREFIX.match(line)
    now = state.clock(prefix.groups()) if prefix else None
    rest = line[prefix.end() :] if prefix else line
    slot = _SLOT.match(rest)
    if slot is not None:
        return _slot_line(state, slot, now)
    timing = _TIMING.match(rest)
    if timing is not None:
        return state.timing(state.timing_task, timing)
    if "server is listening" in rest:
        state.cut_off.update(state.tasks)  # a restart ends what was running
        state.tasks.clear()
        state.running = 0
    return None


def _slot_line(state: _LogState, slot: re.Match[str], now: float | None) -> Turn | None:
    func, task_id, msg = slot.group(1), _whole(slot.group(3)), slot.group(4)
    if task_id < 0:
        return None
    if func.startswith("launch_slot") and msg.startswith("processing task"):
        state.running += 1
        state.tasks[task_id] = _Task(start_s=now, concurrent=state.running)
        return None
    task = state.tasks.get(task_id)
    if "new prompt" in msg and task is not None:
        n = _N_PROMPT.search(msg)
        task.n_prompt = _whole(n.group(1)) if n else None
        return None
    timing = _TIMING.match(msg)
    if timing is not None:
        state.timing_task = task_id
        return state.timing(task_id, timing)
    if func.startswith("print_timing"):
        state.timing_task = task_id  # older servers: the timing lines follow, bare
        if " time =" in msg:
            state.ctx.skip()  # a timing line that does not read as one
        return None
    if func.strip() == "release" and msg.startswith("stop processing") and task is not None:
        state.running = max(state.running - 1, 0)
        task.released = True
        task.end_s = now
        return state.finish(task_id) if task.timed else None
    return None
