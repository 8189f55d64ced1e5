"""Errors a person reads when importing traffic: each carries one plain sentence."""

from __future__ import annotations

from advisor.core.infra.errors import InputError


class TrafficImportError(InputError):
    """The file cannot be imported; the message says what is wrong and what to do."""


class WorkloadNameError(InputError):
    """A saved workload's name is empty, too long or not printable."""


class Cancelled(Exception):
    """The person cancelled the import; nothing was saved."""
