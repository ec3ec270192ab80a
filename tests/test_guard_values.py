"""spam_transpile.lowering.guard_values: guards that read the captured
values where they are; a ``**rest`` capture tested only for truth asks the
mapping's size."""

from __future__ import annotations

from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from spam_transpile import transpile

REST_SIZES = """\
def exact(value):
    match value:
        case {"name": str(name), **rest} if not rest:
            return ("only", name)
        case {"name": name, "port": int(port), **rest} if rest and port > 0:
            return ("more", name, sorted(rest))
        case {"name": name, **rest} if not rest or name == "abcd":
            return ("either", name)
    return None


def calling(value):
    match value:
        case {"name": str(name), **rest} if not rest:
            return ("only", name)
        case {"name": name, **rest} if not rest or len(str(name)) > 3:
            return ("either", name)
    return None


def other_read(value):
    match value:
        case {"name": name, **rest} if "port" not in rest:
            return ("no port", name)
    return None


def numbered(value):
    match value:
        case {1: one, **rest} if not rest:
            return ("one", one)
    return None


for value in [
    {"name": "a"}, {"name": "a", "x": 1}, {"name": 2}, {"name": "a", "port": 1},
    {"name": "a", "port": 1, "x": 2}, {"name": "abcd", "y": 0}, {"name": 3, "z": 1},
    {1: "a"}, {1: "a", 1.5: 2}, [], None,
]:
    print(exact(value), numbered(value), calling(value), other_read(value))
"""


def _readable(target: str = "3.9") -> str:
    return transpile(REST_SIZES, layout="readable", target=target)


@pytest.mark.parametrize(
    "expected",
    [
        'isinstance(value["name"], str) and len(value) == 1',
        # read in the body too: made there, as CPython makes it
        'and len(value) > 2 and value["port"] > 0',
        "rest = dict(value)",
        # ``not rest or ...``: each operand of ``or`` and ``and``
        'len(value) == 1 or value["name"] == "abcd"',
    ],
)
def test_a_rest_tested_for_truth_asks_the_size_of_the_mapping(expected: str) -> None:
    assert expected in _readable()


def test_a_guard_that_calls_gets_the_rest_made() -> None:
    out = _readable().split("def calling")[1]
    # the captures first, the guard inside; no ``elif True:`` (after a
    # case that leaves, no ``else:`` either)
    assert (
        '            return ("only", name)\n'
        '        name = value["name"]\n'
        "        rest = dict(value)\n"
        '        del rest["name"]\n'
        "        if not rest or len(str(name)) > 3:\n"
    ) in out
    assert "True" not in out


def test_a_rest_read_otherwise_is_made_where_the_guard_reads_it() -> None:
    # a new dict the guard reads once, and calls nothing: made there
    out = _readable().split("def other_read")[1]
    assert '"port" not in {k: v for k, v in dict(value).items()' in out


def test_a_rest_of_keys_that_may_be_equal_is_made() -> None:
    # (``1`` and ``1.0`` or ``True`` are one key: the size would not tell)
    numbered = _readable().split("def numbered")[1]
    assert "len(value)" not in numbered and "dict(value).items()" in numbered


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_the_program_runs_as_natively(target: str, tmp_path: Path) -> None:
    assert_runs_like_native(REST_SIZES, _readable(target), tmp_path, (target,))
