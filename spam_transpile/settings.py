"""Target versions and the options that shape the output.

The lowering asks a :class:`Target` what the interpreter it writes for can
run (``target.has_walrus``), never compares version tuples itself: what a
version allows is decided here, once.
"""

from __future__ import annotations

from typing import NamedTuple

from spam_transpile.errors import TranspileError

SUPPORTED_TARGETS = ("3.6", "3.7", "3.8", "3.9")

#: keep-lines: every line keeps its number (what ships); readable: laid out
#: for people (what ``--in-place`` writes)
LAYOUTS = ("keep-lines", "readable")


class Target(NamedTuple):
    """A CPython feature version the output must run on."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def has_walrus(self) -> bool:
        """``name := value`` in expressions (PEP 572, 3.8)."""
        return self >= (3, 8)

    @property
    def has_settable_cells(self) -> bool:
        """A closure cell's ``cell_contents`` can be assigned (3.7)."""
        return self >= (3, 7)

    @property
    def parser_feature_version(self) -> "Target":
        """The oldest ``ast.parse(feature_version=...)`` to check output
        with: 3.7 is the oldest every 3.9+ parser knows."""
        return max(self, Target(3, 7))


def parse_target(target: str, *, filename: str = "<unknown>") -> Target:
    if target in SUPPORTED_TARGETS:
        major, minor = target.split(".")
        return Target(int(major), int(minor))
    raise TranspileError(
        f"unknown target {target!r} (supported: {', '.join(SUPPORTED_TARGETS)})",
        filename=filename,
    )


class LineLimits(NamedTuple):
    """How wide the readable layout's lines may be: ``wrap``, the length
    black wraps at (the output must stay black-stable), and ``limit``, the
    narrowest a linter of the project allows. With nothing configured,
    black's 88 and flake8's 79: black joins a statement wrapped shorter
    than 88 again, so a statement whose one-line form is 80 to 88 columns
    wide is written in a narrower shape instead (lowering/line_fit.py)."""

    wrap: int = 88
    limit: int = 79

    @property
    def narrower(self) -> bool:
        """Whether black may leave lines the linter rejects."""
        return self.limit < self.wrap
