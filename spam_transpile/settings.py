"""Target versions and the options that shape the output."""

from __future__ import annotations

from typing import Tuple

from spam_transpile.errors import TranspileError

SUPPORTED_TARGETS = ("3.6", "3.7", "3.8", "3.9")


def parse_target(target: str, *, filename: str = "<unknown>") -> Tuple[int, int]:
    if target in SUPPORTED_TARGETS:
        major, minor = target.split(".")
        return int(major), int(minor)
    raise TranspileError(
        f"unknown target {target!r} (supported: {', '.join(SUPPORTED_TARGETS)})",
        filename=filename,
    )
