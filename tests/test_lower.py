"""The lowering stage alone: pattern -> condition and bindings (ir.dump text).

Each table row pins what one pattern kind checks, in which order, and what
it binds once the whole pattern matched.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from spam_transpile import transpile
from spam_transpile.lowering.facts import module_facts
from spam_transpile.lowering.ir import dump
from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.names import Names
from like_native import assert_runs_like_native

PRELUDE = """\
from dataclasses import dataclass
@dataclass
class P:
    x: int
    y: int
class Q:
    __match_args__ = ("a",)
"""


def _lower(pattern: str) -> str:
    source = f"{PRELUDE}match s:\n    case {pattern}:\n        pass\n"
    module = cst.parse_module(source)
    match = module.body[-1]
    assert isinstance(match, cst.Match)
    names = Names(frozenset(), frozenset())
    facts = module_facts(ast.parse(source))
    lowering = Lowering(names, module.code_for_node, facts)
    return dump(lowering.lower_case(match.cases[0].pattern, "v"))


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        pytest.param("1", "eq v == 1", id="literal-compares-with-eq"),
        pytest.param("None", "is v is None", id="singleton-compares-with-is"),
        pytest.param("x", "bind x = v", id="capture"),
        pytest.param("_", "", id="wildcard-does-nothing"),
        pytest.param(
            "[a, 1]",
            "kind type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1\nlen len(v) == 2\neq v[1] == 1\nbind a = v[0]",
            id="sequence-checks-then-binds-by-index",
        ),
        pytest.param(
            "[a, *_, 1]",
            "kind type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1\nlen len(v) >= 2\neq v[len(v) - 1] == 1\n"
            "bind a = v[0]",
            id="after-a-star-indexes-from-len-never-negative",
        ),
        pytest.param(
            "[a, *rest]",
            "kind type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1\nlen len(v) >= 1\n"
            "bind a = v[0]\nbind rest = _spam.items(v, 1, 0)",
            id="star-capture-is-a-list-by-index",
        ),
        pytest.param(
            "{'k': 1, 'm': m, **rest}",
            "kind type(v) is dict or _spam.kind(v) == 2\n"
            "eq v.get('k') == 1\n"
            "key v.get('m', _spam.MISSING) is not _spam.MISSING\n"
            "bind m = v.get('m')\nbind rest = _spam.rest(v, ('k', 'm'))",
            id="mapping-gets-with-a-sentinel-literals-in-one-test",
        ),
        pytest.param(
            "{K.A: a, K.B: b}",
            "kind type(v) is dict or _spam.kind(v) == 2\nlen len(v) >= 2\n"
            "key v.get(K.A, _spam.MISSING) is not _spam.MISSING\n"
            "raise _spam.fresh(K.B, (K.A, ))\n"
            "key v.get(K.B, _spam.MISSING) is not _spam.MISSING\n"
            "bind a = v.get(K.A)\nbind b = v.get(K.B)",
            id="value-pattern-keys-checked-for-duplicates-before-lookup",
        ),
        pytest.param(
            "int(n)",
            "isinstance isinstance(v, int)\nbind n = v",
            id="builtin-matches-itself",
        ),
        pytest.param(
            "P(0, y)",
            "isinstance isinstance(v, P)\neq v.x == 0\nbind y = v.y",
            id="local-dataclass-fields-read-directly",
        ),
        pytest.param(
            "Q(0)",
            "isinstance isinstance(v, Q)\neq getattr(v, 'a', None) == 0",
            id="literal-match-args-attribute-may-be-missing",
        ),
        pytest.param(
            "C(0, b=b)",
            "isinstance isinstance(v, _spam.cls(C))\n"
            "attr _spam.attrs(v, C, 1, ('b',)) is not None\n"
            "eq _spam.attrs(v, C, 1, ('b',))[0] == 0\n"
            "bind b = _spam.attrs(v, C, 1, ('b',))[1]",
            id="unknown-class-through-the-helper",
        ),
        pytest.param(
            "P(x, 0) | P(0, x)",
            "isinstance isinstance(v, P)\nany of\n  alternative\n    eq v.y == 0\n"
            "  alternative\n    eq v.x == 0\nbind x = choice(v.x, v.y)",
            id="or-pattern-shares-its-common-checks",
        ),
        pytest.param(
            "['add', a, b] | ['add', a, b, _]",
            "kind type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1\n"
            "any of\n  alternative\n    len len(v) == 3\n  alternative\n    len len(v) == 4\n"
            "eq v[0] == 'add'\nbind a = v[1]\nbind b = v[2]",
            id="or-pattern-shares-its-last-checks-where-it-binds-alike",
        ),
        pytest.param(
            "[1, a, 0] | [a, 2, 0]",
            "kind type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1\n"
            "len len(v) == 3\nany of\n"
            "  alternative\n    eq v[0] == 1\n    eq v[2] == 0\n"
            "  alternative\n    eq v[1] == 2\n    eq v[2] == 0\n"
            "bind a = choice(v[1], v[0])",
            id="or-pattern-binding-apart-keeps-its-last-checks",
        ),
        pytest.param(
            "{'k': [x], 'n': None, 'm': m}",
            "kind type(v) is dict or _spam.kind(v) == 2\n"
            "is v.get('n', _spam.MISSING) is None\n"
            "key v.get('m', _spam.MISSING) is not _spam.MISSING\n"
            "kind v.get('k') is not None and (type(v.get('k')) is tuple"
            " or type(v.get('k')) is list"
            " or type(v.get('k')) is not str and _spam.kind(v.get('k')) == 1)\n"
            "len len(v.get('k')) == 1\nbind x = v.get('k')[0]\nbind m = v.get('m')",
            id="a-missing-key-reads-as-none-where-none-cannot-match",
        ),
        pytest.param(
            "{'k': 'a' | 'b' as x}",
            "kind type(v) is dict or _spam.kind(v) == 2\n"
            "eq v.get('k') in ('a', 'b')\nbind x = v.get('k')",
            id="literal-alternatives-never-match-a-missing-key-read-as-none",
        ),
        pytest.param(
            "P(x=P(x=1, y=a), y=P(x=b, y=c)) | P(x=P(x=2, y=a), y=P(x=c, y=b))"
            " | P(x=a, y=[3, b, c]) | P(x=a, y=[4, b, c])",
            "isinstance isinstance(v, P)\nany of\n"
            "  alternative\n"
            "    isinstance isinstance(v.x, P)\n    eq v.x.x == 1\n"
            "    isinstance isinstance(v.y, P)\n"
            "    store a = v.x.y\n    store b = v.y.x\n    store c = v.y.y\n"
            "  alternative\n"
            "    isinstance isinstance(v.x, P)\n    eq v.x.x == 2\n"
            "    isinstance isinstance(v.y, P)\n"
            "    store a = v.x.y\n    store b = v.y.y\n    store c = v.y.x\n"
            "  alternative\n"
            "    kind type(v.y) is tuple or type(v.y) is list or type(v.y) is not str and _spam.kind(v.y) == 1\n"
            "    len len(v.y) == 3\n    eq v.y[0] == 3\n"
            "    store a = v.x\n    store b = v.y[1]\n    store c = v.y[2]\n"
            "  alternative\n"
            "    kind type(v.y) is tuple or type(v.y) is list or type(v.y) is not str and _spam.kind(v.y) == 1\n"
            "    len len(v.y) == 3\n    eq v.y[0] == 4\n"
            "    store a = v.x\n    store b = v.y[1]\n    store c = v.y[2]",
            id="last-or-pattern-stores-even-where-alternatives-read-alike",
        ),
        pytest.param(
            "Q(a=1 | 2)",
            "isinstance isinstance(v, Q)\neq getattr(v, 'a', None) in (1, 2)",
            id="literal-alternatives-never-match-a-missing-attribute-read-as-none",
        ),
    ],
)
def test_lowering(pattern: str, expected: str) -> None:
    assert _lower(pattern) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("item.hosts[0].port", "item.hosts[0].port"),
        ("s[0].kind", "s[0].kind"),
        ("v[a][b]", "v[a][b]"),
        ('v["a"] + w', '(v["a"] + w)'),
        ("x if y else z", "(x if y else z)"),
        ("-x", "(-x)"),
        ("f(x).y", "(f(x).y)"),
        ("(a, b)", "(a, b)"),
    ],
)
def test_atom_parenthesizes_only_what_needs_it(text: str, expected: str) -> None:
    from spam_transpile.lowering.paths import atom

    assert atom(text) == expected
    ast.parse(expected + ".x", mode="eval")


def test_a_star_capture_of_every_item_is_a_new_list_of_them() -> None:
    from spam_transpile import transpile

    source = (
        "def f(v):\n    match v:\n        case [*items]:\n            return items\n"
    )
    out = transpile(source, layout="readable")
    assert "items = list(v)\n" in out


KINDS_OF_VALUES = """\
import collections


class Node:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class Text(str):
    pass


def kind(v):
    match v:
        case {"items": [first, *_]}:
            return ("items", first)
        case {"items": {"k": k}}:
            return ("mapping", k)
        case Node(body=[stmt]):
            return ("body", stmt)
        case Node(body={"k": k}):
            return ("node mapping", k)
        case _:
            return "other"


for v in [
    {"items": [1, 2]},
    {"items": (3,)},
    {"items": None},
    {},
    {"items": "ab"},
    {"items": Text("cd")},
    {"items": b"ef"},
    {"items": collections.deque([4])},
    {"items": range(5, 6)},
    {"items": {"k": 7}},
    {"items": collections.OrderedDict(k=8)},
    Node(body=[9]),
    Node(body=None),
    Node(),
    Node(body="x"),
    Node(body={"k": 10}),
]:
    print(kind(v))
"""


def test_a_value_of_any_kind_reads_as_native_match_reads_it(tmp_path: Path) -> None:
    # The exact types, str, and None (a missing key's or attribute's value)
    # answer inline; every other value asks the helper.
    out = transpile(KINDS_OF_VALUES)
    assert 'v.get("items")) is not None and (type(' in out
    assert "getattr(v, 'body', None)) is not None and (type(" in out
    stdout = assert_runs_like_native(KINDS_OF_VALUES, out, tmp_path, ("3.9", "3.8"))
    assert stdout.count(b"other\n") == 8
    older = transpile(KINDS_OF_VALUES, target="3.7")
    assert assert_runs_like_native(KINDS_OF_VALUES, older, tmp_path, ("3.7",)) == stdout


CLASSES_OF_METACLASSES = """\
import enum
from abc import ABC


class Shape(ABC):
    pass


class Square(Shape):
    __match_args__ = ("side",)

    def __init__(self, side):
        self.side = side


class Color(enum.Enum):
    RED = 1


NOT_A_CLASS = (Square, Color)


def name(v, cls=Square):
    match v:
        case Square(side):
            return ("square", side)
        case Color():
            return ("color", v.name)
        case Shape():
            return "shape"
        case int() if cls is not Square:
            match v:
                case cls():
                    return "unreachable"
        case _:
            return "other"


for v in [Square(2), Color.RED, Shape.register(str) and "text", 1]:
    print(name(v))
try:
    name(1, NOT_A_CLASS)
except TypeError as error:
    print("TypeError", error)
"""


def test_a_class_with_a_metaclass_is_checked_inline(tmp_path: Path) -> None:
    # An ABC or an Enum is a class without the helper's call; a name that
    # holds no class still raises CPython's TypeError, from the helper.
    out = transpile(CLASSES_OF_METACLASSES)
    assert "Shape if isinstance(Shape, type) else _spam.cls(Shape)" in out
    stdout = assert_runs_like_native(CLASSES_OF_METACLASSES, out, tmp_path, ("3.9",))
    assert b"TypeError called match pattern must be a type\n" in stdout
