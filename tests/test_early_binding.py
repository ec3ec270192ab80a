"""Captures stored where their value is first read (keep-lines layout).

Only where no code can tell: the names a function reads nowhere but in the
cases capturing them, in a function that never reads its own frame. The
differential fuzzer's "quiet" scope runs such functions against CPython.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import FrozenSet, Optional

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spam_transpile import transpile
from spam_transpile.lowering.early_binding import bind_early, store_in_guard
from spam_transpile.lowering.quiet_captures import quiet_captures
from spam_transpile.lowering.ir import All, AnyOf, LoweredPattern
from spam_transpile.lowering.reads import Reads
from spam_transpile.lowering.ir import Test as Check
from like_native import assert_runs_like_native


def _quiet(source: str) -> FrozenSet[str]:
    module = cst.parse_module(textwrap.dedent(source))
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    return quiet_captures(function)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x, y]:
                        return x + y
                    case {"k": x}:
                        del x
            """,
            {"x", "y"},
            id="read-only-where-captured",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x, y] if x > 0:
                        return y
                    case _:
                        pass
                return x
            """,
            {"y"},
            id="read-after-the-match",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x]:
                        return x
                    case {"k": y}:
                        return x
            """,
            {"y"},
            id="read-by-a-case-that-does-not-capture-it",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x]:
                        return x
                print(locals())
            """,
            set(),
            id="locals",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x]:
                        return sys._getframe(0)
            """,
            set(),
            id="frame-getter",
        ),
        pytest.param(
            """\
            def f(v):
                try:
                    match v:
                        case [x]:
                            return 1 / x
                except ZeroDivisionError as e:
                    return e.__traceback__.tb_frame
            """,
            set(),
            id="a-traceback-s-frame",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x]:
                        return lambda: x
                    case [x, y]:
                        return [x for _ in y]
            """,
            {"y"},
            id="closure-and-comprehension-body",
        ),
        pytest.param(
            """\
            def f(v):
                global x
                nonlocal_free = 1
                match v:
                    case [x, y]:
                        return y
            """,
            {"y"},
            id="global",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [x, C.x]:
                        return x
                    case [y, y.real]:
                        return y
            """,
            {"x"},
            id="value-pattern-reads",
        ),
        pytest.param(
            """\
            def f(v):
                for item in v:
                    match item:
                        case [x]:
                            x += 1
                            match x:
                                case int(n) if n > x:
                                    return n
                    x = 0
            """,
            {"x", "n"},
            id="nested-matches-and-stores",
        ),
        pytest.param(
            """\
            def f(v):
                total = 0
                match v:
                    case [total]:
                        pass
                total += 1
            """,
            set(),
            id="augmented-assignment-reads",
        ),
    ],
)
def test_quiet_captures(source: str, expected: set) -> None:
    assert _quiet(source) == frozenset(expected)


def _pattern(*parts: str, bindings: tuple = ()) -> LoweredPattern:
    return LoweredPattern(All(tuple(Check(p) for p in parts)), bindings)


@pytest.mark.parametrize(
    ("parts", "value", "expected_parts", "kept"),
    [
        pytest.param(
            ["isinstance(v.get('x'), int)", "v.get('x') > 0"],
            "v.get('x')",
            ["isinstance(x := v.get('x'), int)", "x > 0"],
            False,
            id="first-read-then-the-name",
        ),
        pytest.param(
            ["v.get('x', _spam.MISSING) is not _spam.MISSING"],
            "v.get('x')",
            ["(x := v.get('x', _spam.MISSING)) is not _spam.MISSING"],
            False,
            id="a-key-test-reads-it-with-its-default",
        ),
        pytest.param(
            ["getattr(v, 'x', _spam.MISSING) is not _spam.MISSING", "v.x > 0"],
            "v.x",
            ["(x := getattr(v, 'x', _spam.MISSING)) is not _spam.MISSING", "x > 0"],
            False,
            id="an-attribute-test-reads-it-with-its-default",
        ),
        pytest.param(
            [
                "(type(v[0]) is tuple or type(v[0]) is list or type(v[0]) is not str and _spam.kind(v[0]) == 1)",
                "len(v[0]) == 2",
            ],
            "v[0]",
            [
                "(type(x := v[0]) is tuple or type(x) is list or type(x) is not str and _spam.kind(x) == 1)",
                "len(x) == 2",
            ],
            False,
            id="inside-the-first-operand-of-or",
        ),
        pytest.param(
            ["v.a == 1 or v[0] == 2", "v[0] < 3 < v[0]"],
            "v[0]",
            ["v.a == 1 or v[0] == 2", "(x := v[0]) < 3 < x"],
            False,
            id="never-where-it-may-not-run",
        ),
        pytest.param(
            ["v.a == 1 or v[0] == 2", "3 < 4 < v[0]", "v[0] if v.b else 0"],
            "v[0]",
            ["v.a == 1 or v[0] == 2", "3 < 4 < v[0]", "v[0] if v.b else 0"],
            True,
            id="no-place-that-always-runs",
        ),
        pytest.param(
            ["v[0] == 'v[0]'"],
            "v[0]",
            ["v[0] == 'v[0]'"],
            True,
            id="a-literal-spells-the-path",
        ),
    ],
)
def test_bind_early(parts: list, value: str, expected_parts: list, kept: bool) -> None:
    lowered = bind_early(_pattern(*parts, bindings=(("x", value),)), frozenset({"x"}))
    assert isinstance(lowered.cond, All)
    assert [
        t.expr for t in lowered.cond.parts if isinstance(t, Check)
    ] == expected_parts
    assert bool(lowered.bindings) is kept


def test_only_quiet_names_and_plain_values_are_bound_early() -> None:
    pattern = LoweredPattern(
        All((Check("isinstance(v[0], int)"), AnyOf((Check("v[1] == 1"),)))),
        (("x", "v[0]"), ("y", "v[1]")),
    )
    lowered = bind_early(pattern, frozenset({"y"}))
    assert lowered == pattern  # x is not quiet; y is read only inside the or


@pytest.mark.parametrize(
    ("guard", "expected"),
    [
        ("x in EXITS", "(x := v[1]) in EXITS"),
        ('"ctrl" in x', '"ctrl" in (x := v[1])'),
        ("len(x) > 2", "len(x := v[1]) > 2"),
        ("x", "(x := v[1])"),
        ("not x", "not (x := v[1])"),
        ("-x < limit", "-(x := v[1]) < limit"),
        ("limit < x.size", "limit < (x := v[1]).size"),
        ("x[0] and y", "(x := v[1])[0] and y"),
        ("1 + x > y", "1 + (x := v[1]) > y"),
        pytest.param("y > x", "y > (x := v[1])", id="another-quiet-capture-first"),
        pytest.param("f(y) and x", None, id="after-a-call"),
        pytest.param("self.ok(x)", None, id="after-an-attribute"),
        pytest.param("y and x", None, id="after-a-truth-test"),
        pytest.param("x.a or x", "(x := v[1]).a or x", id="the-first-read-only"),
        pytest.param("(lambda: x)()", None, id="in-a-lambda"),
        pytest.param("f(*x)", None, id="starred"),
        pytest.param("f(k=x)", None, id="keyword"),
        pytest.param("z in EXITS", None, id="not-a-capture"),
        pytest.param("q in EXITS", None, id="not-quiet"),
    ],
)
def test_a_capture_the_guard_reads_first_is_stored_there(
    guard: str, expected: Optional[str]
) -> None:
    pattern = _pattern("len(v) == 2", bindings=(("x", "v[1]"), ("q", "v[0]")))
    node = cst.parse_expression(guard)
    stored = store_in_guard(pattern, node, frozenset({"x", "y"}))
    if expected is None:
        assert stored is None
        return
    assert stored is not None
    rest, name, store = stored
    assert rest.bindings == (("q", "v[0]"),)
    replaced = node.deep_replace(name, cst.Name("_STORE_"))
    assert cst.Module([]).code_for_node(replaced).replace("_STORE_", store) == expected


def test_a_capture_another_store_reads_stays_in_the_list() -> None:
    # ``{k: m as d}``: d's value is the name m
    pattern = _pattern("True", bindings=(("m", "v['k']"), ("d", "m")))
    assert (
        store_in_guard(pattern, cst.parse_expression("m > 0"), frozenset("md")) is None
    )


LOUD_AND_QUIET = """\
import sys


def quiet(v):
    match v:
        case {"k": int(x), "j": str(y)}:
            return ("int and str", x, y)
        case {"k": x, **rest} if x:
            return ("any", x, sorted(rest))
        case [int(x), *_] | [_, int(x)]:
            return ("seq", x)
        case _:
            return "miss"


def both(v):
    match v:
        case {"k": m as d} if d:
            return ("both", m, d)
        case [int() as a, (b as c)] if a != c:
            return ("seq", a, b, c)
        case _:
            return "miss"


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self._x, self.y = x, y

    @property
    def x(self):
        print("  read x")
        return self._x


def note(value):
    print("  guard", value)
    return value


def guarded(v):
    match v:
        case Point(x, y) if note(x):
            return ("point", x, y)
        case Point(x=0, y=y) if y in (1, 2):
            return ("on an axis", y)
        case [a, b] if not b:
            return ("pair", a, b)
        case _:
            return "miss"


def loud(v):
    x = y = "before"
    match v:
        case {"k": int(x), "j": str(y)}:
            pass
        case _:
            pass
    return (x, y, sorted(k for k in locals() if not k.startswith("_")))


SUBJECTS = [
    {"k": 1, "j": "s"},
    {"k": 1, "j": 2},
    {"k": 0, "j": "s", "z": 1},
    {"k": "a"},
    [1, 2],
    ["a", 3],
    ["a", "b"],
    {},
    None,
]
for subject in SUBJECTS:
    print(quiet(subject), both(subject), loud(subject))
for subject in [Point(1, 2), Point(0, 1), Point(0, 3), [1, 0], [1, 2], None]:
    print(guarded(subject))
"""


def test_quiet_and_loud_functions_behave_like_native_match(tmp_path: Path) -> None:
    out = transpile(LOUD_AND_QUIET)
    quiet, loud = out.split("def loud")
    # (the guard ``if x`` may run code: the cases share no lookup past it)
    assert (
        'isinstance(x := v.get("k"), int) and isinstance(y := v.get("j"), str)' in quiet
    )
    # A failed case leaves the loud function's x alone: stored after it matched.
    assert '[x := v.get("k"), y := v.get("j")]' in loud
    # an attribute's presence test stores it ("read x" once), and a guard
    # that reads a capture first stores it (before any code of the guard)
    assert "(x := getattr(v, 'x', _spam.MISSING)) is not _spam.MISSING" in quiet
    assert "and not (b := v[1]):" in quiet
    stdout = assert_runs_like_native(LOUD_AND_QUIET, out, tmp_path, ("3.9", "3.8"))
    assert b"  read x\n  guard 1\n" in stdout


RETURNING = """\
def f(line):
    match line.split():
        case [verb, *rest]:
            return describe(verb, rest)
        case _:
            return None
"""


@pytest.mark.parametrize(
    "reader",
    [
        "locals()",
        "sys._getframe(0).f_locals",
        'getattr(sys._getframe(0), "f_locals")',
        "inspect.stack()",
    ],
)
def test_a_function_reading_its_frame_is_lowered_as_before(reader: str) -> None:
    source = REQUEST.replace("return None", f"return {reader}")
    out = transpile(source)
    assert "isinstance(path := " not in out
    assert out.count('event.get("request")') > 1


def test_a_function_that_never_reads_its_frame_returns_without_deleting() -> None:
    # Only code reading the frame from outside could see the temporaries
    # before the return ends the frame; as for an operator's dunder method.
    quiet = transpile(RETURNING)
    assert "            return describe(verb, rest)\n" in quiet
    loud = transpile(RETURNING + "    print(locals())\n")
    assert "; return describe(verb, rest)\n" in loud
    assert "del _spam_subject1" in loud
    # ``yield`` keeps the frame alive, suspended: its temporaries are deleted.
    suspended = transpile(RETURNING.replace("return describe", "return (yield)"))
    assert "del _spam_subject1" in suspended


def test_fields_the_helper_reads_are_read_once_where_the_frame_is_quiet() -> None:
    from like_native import FIELDS_AT_RUN_TIME

    quiet = transpile(FIELDS_AT_RUN_TIME)
    assert "(_spam_fields1 := _spam.attrs(value, Pair, 2, ())) is not None" in quiet
    assert "[a := _spam_fields1[0], b := _spam_fields1[1]]" in quiet
    # the module-level match, and a function that reads its frame, call the
    # helper for each field: a temporary they keep could be seen there
    assert "[a := _spam.attrs(_spam_subject" in quiet
    loud = transpile(FIELDS_AT_RUN_TIME.replace('return "other"', "return locals()"))
    assert "_spam_fields" not in loud


REQUEST = """\
def f(event):
    match event:
        case {"type": "http", "request": {"method": "GET", "path": str(path)}}:
            return path
        case {"kind": k, "x": x}:
            return event.get(k, x)
        case _:
            return None
"""


def test_a_path_a_case_reads_again_is_read_once() -> None:
    out = transpile(REQUEST)
    # ``event.get("request")`` in the mapping check and under it: once.
    assert '_spam_value1 := event.get("request")' in out
    assert 'event.get("request")' in out and out.count('event.get("request")') == 1
    # a method is no path: ``event.get`` itself is not stored
    assert ":= event.get)" not in out
    loud = transpile(REQUEST.replace("return None", "return locals()"))
    assert "_spam_value" not in loud
    assert loud.count('event.get("request")') > 1


def test_a_value_pattern_is_looked_up_each_time() -> None:
    # A dotted name is looked up anew where CPython looks it up: only paths
    # from the subject are read once.
    source = (
        "def f(e):\n"
        "    match e:\n"
        "        case [Op.ADD, Op.ADD, [x]]:\n"
        "            return x\n"
    )
    out = transpile(source)
    assert out.count("Op.ADD") == 2 and ":= Op.ADD" not in out
    assert "(_spam_value" not in out or ":= e[2]" in out


# The reads of a value, as the regular expressions the search replaced define
# them: no word character or dot before; after, no word character and no
# ``:=``, or for a defaulted ``get`` its default up to the ``)``.
def _read_regex(value: str) -> "re.Pattern[str]":
    if value.endswith(", "):
        return re.compile(rf"(?<![\w.]){re.escape(value)}[\w.]+\)")
    return re.compile(rf"(?<![\w.]){re.escape(value)}(?!\w|\s*:=)")


_READ_VALUES = ["s", "s[0]", "v.x", "s.get('k', ", "_spam_subject1", "é"]
# Texts built from the values and what can sit around them.
_READ_PIECES = st.sampled_from(
    [*_READ_VALUES, "s", ".", "_", "a", "é", "2", " ", "\t", ":=", ":", "=", "(", ")"]
    + ["_spam.MISSING)", ", ", "[0]", "x"]
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    value=st.sampled_from(_READ_VALUES),
    text=st.lists(_READ_PIECES, max_size=12).map("".join),
)
def test_reads_finds_what_the_regular_expression_finds(value: str, text: str) -> None:
    regex, reads = _read_regex(value), Reads(value)
    assert list(reads.finditer(text)) == [m.span() for m in regex.finditer(text)]
    found = regex.search(text)
    assert reads.search(text) == (found.span() if found else None)
    assert reads.sub("NAME", text) == regex.sub("NAME", text)


OR_OF_CLASSES = """\
class Assign:
    __match_args__ = tuple(["targets", "value"])

    def __init__(self, targets, value):
        self.targets, self.value = targets, value


class AugAssign:
    __match_args__ = tuple(["target", "op", "value"])

    def __init__(self, target, op, value):
        self.target, self.op, self.value = target, op, value


def assigned(node):
    match node:
        case Assign(targets=[target], value=value) | AugAssign(target, _, value):
            return (target, value)
        case Assign(targets=[*_, last]) | AugAssign(_, _, [last]):
            return ("last", last)
        case _:
            return "other"


for node in [
    Assign(["a"], 1),
    Assign(["a", "b"], 2),
    Assign((), 3),
    Assign("ab", 4),
    AugAssign("t", "+", 5),
    AugAssign("t", "+", [6]),
    None,
]:
    print(assigned(node))
"""


def test_an_or_pattern_reads_each_alternative_s_fields_once(tmp_path: Path) -> None:
    out = transpile(OR_OF_CLASSES)
    first = next(line for line in out.splitlines() if "AugAssign, 3" in line)
    # each alternative stores what it reads again, and reads it from there
    assert first.count("_spam.attrs(") == 1
    assert "[target := _spam_fields1[0], value := _spam_fields1[2]]" in first
    assert first.count("getattr(node, 'targets', None)") == 1
    # (a missing attribute reads as None, which the sequence check rules
    # out: this line is wide enough to be written compact, by the helper)
    assert "_spam.kind(_spam_value2 := getattr(node, 'targets', None)) == 1" in first
    stdout = assert_runs_like_native(OR_OF_CLASSES, out, tmp_path, ("3.9", "3.8"))
    assert b"('a', 1)\n('last', 'b')\n" in stdout
    # a function that reads its frame keeps no temporary to be seen there
    loud = transpile(OR_OF_CLASSES.replace('return "other"', "return locals()"))
    assert "_spam_fields" not in loud and "_spam_value" not in loud
