"""The keep-lines layout keeps a case's line within ``case_headers.WIDEST``
where it can: a case whose checks would make it wider is lowered again
with its checks written compact, and a header over several lines spreads
its checks down them (spam_transpile/lowering/keep_lines.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from spam_transpile import transpile
from spam_transpile.lowering.case_headers import WIDEST

PROGRAM = '''\
"""Events of a plain class: its attributes are only known when it runs."""


class Event:
    def __init__(self, kind, source, target=None, payload=(), extra=None):
        self.kind, self.source, self.target = kind, source, target
        self.payload, self.extra = payload, extra


def describe(event):
    match event:
        case Event(kind="move", target=[x1, y1], payload=(str(label), *_)):
            return ("move", x1, y1, label)
        case Event(
            kind="jump",
            source={"x": int(x0), "y": int(y0)},
            target=[int(x1), int(y1)],
            payload=(str(label), *_), extra=[[first_extra_item, *_], {"key": second_extra_value}],
        ):
            return ("jump", x0, y0, x1, y1, label, first_extra_item, second_extra_value)
        case (a, b):
            return ("pair", a, b)
        case _:
            return None


for event in [
    Event("move", {"x": 1, "y": 2}, [3, 4], ("go",), [[5], {"key": 6}]),
    Event("move", {"x": 1, "y": 2}, [3, 4], ("go",), [[5], {"other": 6}]),
    Event("move", {"x": 1, "y": "2"}, [3, 4], ("go",), [[5], {"key": 6}]),
    Event("jump", {"x": 1, "y": 2}, (3, 4), ["up", 0], [(7, 8), {"key": 9}]),
    Event("jump", {"x": 1, "y": 2}, (3, 4), "up", [(7, 8), {"key": 9}]),
    Event("jump", {"x": 1}, (3, 4), ["up"], [(7,), {"key": 9}]),
    Event("move", None),
    (1, 2),
    "ab",
    [1, 2, 3],
]:
    print(describe(event))
'''


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_a_wide_case_is_written_compact_and_runs_like_native(
    target: str, tmp_path: Path
) -> None:
    out = transpile(PROGRAM, target=target)
    assert len(out.splitlines()) == len(PROGRAM.splitlines())
    lines = out.splitlines()
    wide = next(line for line in lines if line.startswith("    if isinstance(event"))
    # the helper alone checks kinds and the class: no exact types first
    assert "_spam.kind(" in wide and "is tuple or" not in wide
    assert "_spam.cls(Event)" in wide and "isinstance(Event, type)" not in wide
    assert len(wide) <= 400
    # a narrow case keeps the exact types that answer without a call
    pair = next(line for line in lines if "len(event) == 2" in line)
    assert "is tuple or" in pair
    assert_runs_like_native(PROGRAM, out, tmp_path, (target,))


def test_a_header_over_several_lines_spreads_its_checks_down_them() -> None:
    out = transpile(PROGRAM, target="3.9")
    source_lines = PROGRAM.splitlines()
    start = next(
        i
        for i, line in enumerate(source_lines)
        if "Event(" in line and "jump" in source_lines[i + 1]
    )
    end = next(
        i for i in range(start, len(source_lines)) if source_lines[i].strip() == "):"
    )
    header = out.splitlines()[start : end + 1]
    # every line of the header holds checks, none too wide
    assert all(len(line) <= WIDEST for line in header)
    assert sum(1 for line in header if " and " in line) >= 3
    # and the body stays on its line
    assert out.splitlines()[end + 1].strip().startswith('return ("jump"')


def test_the_benchmark_programs_keep_their_lines_narrow() -> None:
    """Every line of every benchmark program's keep-lines output, on every
    target: within the helper's own width (helper_lines.LINE_LIMIT)."""
    folder = Path(__file__).resolve().parent.parent / "scripts" / "bench" / "fixtures"
    for path in sorted(folder.glob("*.py")):
        source = path.read_text("utf-8")
        for target in ("3.9", "3.8"):
            out = transpile(source, target=target, filename=str(path))
            assert _widest(out) <= 400, (path.name, target)
