"""LLM Hardware Advisor: measure a GGUF model, explain the numbers, advise on upgrades."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("llm-hardware-advisor")
except _metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0"

APP_NAME = "LLM Hardware Advisor"
