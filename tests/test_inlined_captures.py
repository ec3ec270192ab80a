"""spam_transpile.lowering.inlined_captures: the readable layout reads a
frozen field, or the subject itself, where the body read its capture, and
keeps the capture wherever a reread could tell the difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from type_check import assert_mypy_clean
from spam_transpile import transpile

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "fixtures" / "readable" / "inlined_captures.py"


def _readable(target: str = "3.9") -> str:
    return transpile(PROGRAM.read_text("utf-8"), layout="readable", target=target)


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\n\n\n", start + 1)
    return out[start : end if end != -1 else None]


@pytest.mark.parametrize(
    "function, expected",
    [
        # a frozen dataclass's fields, a NamedTuple's, the subject itself
        ("frozen_fields", "        return (value.right, value.left)\n"),
        ("frozen_fields", "        return value.x + value.y\n"),
        ("frozen_fields", "        return value.upper()\n"),
        ("frozen_fields", '    return ("other", value)'),
        # a generator's first iterable and a list comprehension run at once
        ("in_generators", "        firsts = list(item for item in value.left)\n"),
        ("in_generators", "        pairs = [(item, right) for item in value.left]\n"),
        # an element of a tuple subject that is a local name
        ("tuple_subject", "        return Point(-left.x, -left.y)\n"),
        ("tuple_subject", "        return Pair(left, left)\n"),
        # a guard and its body both read the fields
        ("guarded", "        if value.x > value.y:\n            return value.x\n"),
        # ``Point(x=...)`` in another case reads no variable ``x``
        ("keyword_named_like_capture", "        return (value.left.x, value.right)\n"),
    ],
)
def test_a_body_reads_a_frozen_field_where_it_read_the_capture(
    function: str, expected: str
) -> None:
    assert expected in _function(_readable(), function)


@pytest.mark.parametrize(
    "function, kept",
    [
        ("mutable_field", "content = value.content\n"),  # may be set meanwhile
        ("read_after", "left = value.left\n"),  # read after the match
        ("read_later", "left, right = value.left, value.right\n"),  # a lambda
        ("subject_rebound", "left = value.left\n"),  # the body rebinds value
        ("read_often", "x = value.x\n"),  # four reads: the name says more
        ("assigned_in_body", "x = value.x\n"),  # ``x += 1``
        ("reads_frame", "x, y = value.x, value.y\n"),  # ``locals()``
        ("in_generators", "right = value.right\n"),  # read when advanced
        ("shadowed_in_comprehension", "left = value.left\n"),  # ``for left in``
        ("computed_subject", "x, y = subject"),  # a temporary of ours
    ],
)
def test_a_capture_stays_where_a_reread_could_differ(function: str, kept: str) -> None:
    assert kept in _function(_readable(), function)


def test_a_module_level_capture_stays_a_variable_of_the_module() -> None:
    assert (
        "    x, y = subject" in _readable().split("def keyword_named_like_capture")[1]
    )


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_the_program_runs_as_natively(target: str, tmp_path: Path) -> None:
    source = PROGRAM.read_text("utf-8")
    assert_runs_like_native(source, _readable(target), tmp_path, (target,))


def test_the_program_type_checks(tmp_path: Path) -> None:
    assert_mypy_clean(_readable(), tmp_path)
