"""spam_transpile.lowering.runtime: the helper's read of a class pattern's
attributes remembers a validated ``__match_args__`` and reads through
``operator.attrgetter``, without changing what is read, in which order, or
which TypeError is raised."""

from __future__ import annotations

import collections
import pickle
from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from spam_transpile import transpile
from spam_transpile.lowering.runtime import helper_source

ROOT = Path(__file__).resolve().parent.parent
ATTRS_READS = ROOT / "fixtures" / "helper" / "attrs_reads.py"


@pytest.mark.parametrize(
    "target, runs_on",
    [("3.9", ("3.9", "3.10", "3.12")), ("3.8", ("3.8",))],
)
def test_remembered_reads_run_as_native_match(
    target: str, runs_on: tuple, tmp_path: Path
) -> None:
    source = ATTRS_READS.read_text("utf-8")
    out = transpile(source, target=target)
    assert "_spam.attrs(" in out
    assert_runs_like_native(source, out, tmp_path, runs_on)


def _helper() -> dict:
    namespace: dict = {"__name__": "_spam_helper"}
    exec(helper_source(["attrs"]), namespace)
    return namespace


class _Point:
    __match_args__ = ("x", "y")

    def __init__(self, x: object, y: object) -> None:
        self.x, self.y = x, y


def test_a_valid_match_args_is_remembered_and_read_at_once() -> None:
    helper = _helper()
    attrs, remembered = helper["attrs"], helper["_C"]
    assert attrs(_Point(1, 2), _Point, 2, ()) == [1, 2]  # validated first
    assert len(remembered) == 1
    assert attrs(_Point(3, 4), _Point, 2, ()) == (3, 4)  # then remembered
    assert attrs(_Point(5, 6), _Point, 1, ()) == [5]  # another count
    assert attrs(_Point(5, 6), _Point, 1, ()) == (5,)
    missing = _Point(1, 2)
    del missing.y
    assert attrs(missing, _Point, 2, ()) is None


def test_an_invalid_match_args_is_never_remembered() -> None:
    helper = _helper()
    attrs, remembered = helper["attrs"], helper["_C"]

    class Listed:
        __match_args__ = ["x"]

    for _ in range(2):
        with pytest.raises(TypeError, match="must be a tuple"):
            attrs(Listed(), Listed, 1, ())
    assert not remembered


def test_the_memory_is_bounded() -> None:
    helper = _helper()
    attrs, remembered = helper["attrs"], helper["_C"]
    for i in range(600):
        cls = type(f"C{i}", (), {"__match_args__": (f"x{i}",)})
        obj = cls()
        setattr(obj, f"x{i}", i)
        assert attrs(obj, cls, 1, ()) == [i]
        assert len(remembered) <= 256


def _helper_before_310() -> dict:
    """The helper as it runs before 3.10, where ``__match_args__`` is
    derived (the flag test reads ``list.__flags__``)."""
    namespace: dict = {"__name__": "_spam_helper"}
    source = helper_source(["attrs"]).replace("list.__flags__ & 32", "0")
    exec(source, namespace)
    return namespace


def test_a_derived_match_args_is_worked_out_once_per_class() -> None:
    helper = _helper_before_310()
    attrs, derived = helper["attrs"], helper["_M"]
    Pair = collections.namedtuple("Pair", "left right")
    assert attrs(Pair(1, 2), Pair, 2, ()) == [1, 2]
    assert len(derived) == 1
    calls = []
    original = helper["_d"]
    helper["_d"] = lambda c: calls.append(c) or original(c)
    for i in range(3):
        assert list(attrs(Pair(i, -i), Pair, 2, ())) == [i, -i]
    assert calls == []  # remembered


def test_an_assigned_match_args_replaces_the_derived_one() -> None:
    helper = _helper_before_310()
    attrs = helper["attrs"]
    Pair = collections.namedtuple("Pair", "left right")
    assert attrs(Pair(1, 2), Pair, 1, ()) == [1]
    Pair.__match_args__ = ("right",)  # as on 3.10, where this takes effect
    assert list(attrs(Pair(1, 2), Pair, 1, ())) == [2]
    del Pair.__match_args__
    assert list(attrs(Pair(1, 2), Pair, 1, ())) == [1]


def test_the_derived_memory_is_bounded_and_pickles_empty() -> None:
    helper = _helper_before_310()
    attrs, derived = helper["attrs"], helper["_M"]
    for i in range(600):
        cls = collections.namedtuple(f"T{i}", "x")
        assert list(attrs(cls(i), cls, 1, ())) == [i]
        assert len(derived) <= 256
    assert pickle.loads(pickle.dumps(derived)) == {}
