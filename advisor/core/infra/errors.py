"""Errors the user reads: one base class, each error carrying its one sentence.

Anything raised as an `AdvisorError` is a sentence for the user: what happened and what to
do. The command line maps `InputError` (a mistake in what was asked: a wrong file, an
unknown name, a number out of range) to exit status 2 and `RunError` (the work itself
failed: llama.cpp crashed, the disk is full) to exit status 1. Any other exception is a bug
of ours: logged with its traceback and reported as one, with the log's path.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class AdvisorError(Exception):
    """A failure with a sentence for the user (str(error) is that sentence)."""

    exit_code = EXIT_FAILED


class InputError(AdvisorError, ValueError):
    """A mistake in what the user asked for or gave: exit status 2."""

    exit_code = EXIT_BAD_INPUT


class RunError(AdvisorError, RuntimeError):
    """The work itself failed (not the user's input): exit status 1."""

    exit_code = EXIT_FAILED


class StorageError(RunError, OSError):
    """A file the app owns could not be read or written; the sentence gives the real reason."""


class LlamaMissingError(RunError):
    """llama-cpp-python is not installed (or cannot load): say how to install it."""

    def __init__(self, detail: str = "") -> None:
        why = f" ({detail})" if detail else ""
        super().__init__(
            "llama.cpp is not available in this installation" + why + "; install it with "
            "'pip install llama-cpp-python' (or reinstall the app), then try again."
        )


def os_reason(exc: OSError) -> str:
    """The plain reason behind an OSError: 'the disk is full', 'permission denied', ..."""
    import errno

    reasons = {
        errno.ENOSPC: "the disk is full",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "the folder is on a read-only file system",
        errno.ENOTDIR: "a file stands where a folder should be",
        errno.EEXIST: "a file stands where a folder should be",
        errno.EISDIR: "a folder stands where a file should be",
        errno.ENAMETOOLONG: "the file name is too long",
        errno.ENOENT: "the file or folder does not exist",
    }
    return reasons.get(exc.errno or -1, exc.strerror or str(exc))


def is_users_situation(exc: BaseException) -> bool:
    """An OSError of the machine the user runs on (a full disk, a permission, a read-only or
    missing folder, too many open files), not a bug of the program."""
    import errno

    situations = {
        getattr(errno, name, None)
        for name in ("ENOSPC", "EACCES", "EPERM", "EROFS", "ENOTDIR", "EISDIR", "ENAMETOOLONG",
                     "ENOENT", "EDQUOT", "EIO", "EMFILE", "ENFILE", "EBUSY", "ETXTBSY", "ELOOP")
    } - {None}  # fmt: skip
    return isinstance(exc, OSError) and exc.errno in situations
