"""Exact token counts from the model's own tokenizer, in a child process.

`ModelTokenCounter` is a `TokenCounter` (advisor.core.traffic) that hands batches of text to
`python -m advisor.bench tokenize MODEL.gguf` (see advisor.bench.tokenize): llama.cpp loads
only the vocabulary, so a 70 GB model costs a few MB and a second. The parent never imports
llama.cpp; a crash of the tokenizer is one sentence, not a crash of the app.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from advisor.bench.controller import _popen_kwargs, child_command
from advisor.core.traffic.errors import TrafficImportError

START_TIMEOUT_S = 60.0  # loading a vocabulary takes about a second; a cold disk, longer
BATCH_TIMEOUT_S = 300.0  # one batch of 256 texts: milliseconds to seconds


class ModelTokenCounter:
    """Counts tokens with the tokenizer of the GGUF at `path`. Use as a context manager."""

    exact = True

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.name = f"the model's own tokenizer ({self.path.name}, llama.cpp)"
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()

    def __enter__(self) -> ModelTokenCounter:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> None:
        if not self.path.is_file():
            raise TrafficImportError(
                f"The model file {self.path.name} is not there any more; choose it again "
                "to count tokens with its tokenizer."
            )
        try:
            self._proc = subprocess.Popen(
                child_command("tokenize", str(self.path)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                bufsize=1,
                **_popen_kwargs(),
            )
        except OSError as exc:
            raise TrafficImportError(
                f"The tokenizer process could not start ({exc.strerror or exc}); the tokens "
                "can still be estimated without a model."
            ) from exc
        stdout = self._proc.stdout
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                self._lines.put(line)
            self._lines.put(None)

        threading.Thread(target=read, daemon=True, name="tokenizer-out").start()
        first = self._answer(START_TIMEOUT_S)
        if not isinstance(first, dict) or not first.get("ready"):
            message = first.get("error") if isinstance(first, dict) else None
            self.close()
            raise TrafficImportError(
                (message or f"llama.cpp could not read the vocabulary of {self.path.name}.")
                + " Import without a model to estimate the tokens instead."
            )

    def count(self, texts: list[str]) -> list[int]:
        """Token counts of `texts` (the text alone, no special tokens), in order."""
        if self._proc is None or self._proc.stdin is None:
            raise TrafficImportError("The tokenizer is not running; start the import again.")
        try:
            self._proc.stdin.write(json.dumps(texts) + "\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise self._died() from exc
        counts = self._answer(BATCH_TIMEOUT_S)
        if not isinstance(counts, list) or len(counts) != len(texts):
            raise self._died()
        return [int(c) for c in counts]

    def _answer(self, timeout_s: float) -> Any:
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            self.close()
            raise TrafficImportError(
                f"The tokenizer did not answer within {timeout_s:.0f} s; import again, or "
                "without a model to estimate the tokens."
            ) from None
        if line is None:
            raise self._died()
        try:
            return json.loads(line)
        except ValueError:
            raise self._died() from None

    def _died(self) -> TrafficImportError:
        code = self._proc.poll() if self._proc is not None else None
        self.close()
        how = f" (exit status {code})" if code is not None else ""
        return TrafficImportError(
            f"The tokenizer process stopped unexpectedly{how}; import again, or without a "
            "model to estimate the tokens."
        )

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
