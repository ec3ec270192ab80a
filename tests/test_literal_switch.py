"""A long run of literal cases, tested in two halves (keep-lines layout).

The match line asks which half can hold the subject's case; see
spam_transpile/lowering/literal_switch.py for why that is exact. These tests
check where the split applies, that no line moves, and that subjects of
every kind (exact ints and strs, bools, floats, enums, classes with their own
``__eq__``, unhashable ones, ones whose ``__eq__`` raises) take the case
native ``match`` takes, with the same ``__eq__`` calls in the same order.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from spam_transpile import transpile
from like_native import assert_runs_like_native


def _switch(count: int, indent: str = "    ", subject: str = "op") -> str:
    cases = "".join(
        f"{indent}    case {i}:\n{indent}        return {i * 10}\n"
        for i in range(count)
    )
    return f"{indent}match {subject}:\n{cases}{indent}    case _:\n{indent}        return -1\n"


# A statement before the functions: the helper is bound there (with none,
# each function binds it on its first match line, which then has no room).
HEAD = "import sys\n"

INT_SWITCH = HEAD + "def f(op):\n" + _switch(20)

WORD_SWITCH = """\
import sys
def g(word):
    match word:
        case "if" | "elif":
            return 1
        case "else":
            return 2
        case "for" | "while" | "async" "for":
            return 3
        case "break" | "continue":
            return 4
        case "def" | "class" | "lambda":
            return 5
        case "return" | "yield":
            return 6
        case "import" | "from":
            return 7
        case "try" | "except":
            return 8
        case "finally":
            return 9
        case "raise":
            return 10
        case 0 | 1:
            return 11
        case "with" | "as":
            return 12
        case [x, *_]:
            return 13
        case other:
            return 14
"""


def _lines_of(code: str, text: str) -> list:
    return [n for n, line in enumerate(code.splitlines(), 1) if text in line]


def test_the_match_line_splits_a_long_run_and_no_line_moves() -> None:
    out = transpile(INT_SWITCH, target="3.8")
    lines = out.splitlines()
    assert len(lines) == len(INT_SWITCH.splitlines())
    header = lines[2]
    assert header == (
        "    if (_spam_op1 := op if type(op) is int else "
        "_spam.first_equal(op, range(10))) "
        "in {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}:"
    )
    source_lines = INT_SWITCH.splitlines()
    for i in range(20):
        (case_line,) = _lines_of(INT_SWITCH, f"case {i}:")
        tested = f"_spam_op1 == {i}:" if i < 10 else f"elif op == {i}:"
        assert tested in lines[case_line - 1]
        assert lines[case_line] == source_lines[case_line]  # the body
    assert lines[-2].strip() == "elif op is op:"
    assert max(map(len, lines[1:])) <= 160  # line 1 holds the helper


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(HEAD + "def f(op):\n" + _switch(15), id="too-few-literals"),
        *(
            pytest.param(INT_SWITCH.replace(old, new), id=reason)
            for reason, old, new in [
                ("a-guard-ends-the-run-early", "case 3:", "case 3 if op:"),
                ("a-bool-first", "case 0:", "case True:"),
                ("a-float-first", "case 0:", "case 0.5:"),
                ("bytes-first", "case 0:", "case b'x':"),
                ("reads-its-frame", "match", "print(locals())\n    match"),
                ("a-subject-over-two-lines", "match op:", "match (op\n    ):"),
            ]
        ),
        pytest.param(
            "OP = 3\n" + _switch(20, indent="", subject="OP").replace("return", "R ="),
            id="module-level",
        ),
    ],
)
def test_where_the_run_is_not_split(source: str) -> None:
    out = transpile(source, target="3.9")
    assert "first_equal" not in out
    assert len(out.splitlines()) == len(source.splitlines())


WORDS = [f'"w{i}"' for i in range(20)]


def _first_half(cases: list) -> str:
    """What the split's ``first_equal`` gets, for a switch over ``cases``."""
    body = "".join(
        f"        case {case}:\n            return {i}\n"
        for i, case in enumerate(cases)
    )
    out = transpile(f"{HEAD}def f(s):\n    match s:\n{body}", target="3.9")
    header = out.splitlines()[2]
    return header[header.index("first_equal(s, ") + 15 : header.index(")) in {")]


@pytest.mark.parametrize(
    ("cases", "expected"),
    [
        pytest.param(list(range(20)), "range(10)", id="consecutive-ints"),
        pytest.param(list(range(-3, 17)), "range(-3, 7)", id="from-minus-three"),
        pytest.param(
            [0, 2, *range(3, 21)], "(0, 2, 3, 4, 5, 6, 7, 8, 9, 10)", id="a-gap"
        ),
        pytest.param(
            [1, 0, *range(2, 20)], "(1, 0, 2, 3, 4, 5, 6, 7, 8, 9)", id="out-of-order"
        ),
        pytest.param(
            WORDS,
            '"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9".split()',
            id="words",
        ),
        pytest.param(
            [f"'w{i}'" for i in range(20)],
            "'w0 w1 w2 w3 w4 w5 w6 w7 w8 w9'.split()",
            id="words-in-single-quotes",
        ),
        # not spelled as words: a tuple
        *(
            pytest.param(
                [first, *WORDS[:19]], f"({first}, {', '.join(WORDS[:9])})", id=reason
            )
            for reason, first in [
                ("a-space", '"a b"'),
                ("empty", '""'),
                ("an-escape", '"\\n"'),
            ]
        ),
        pytest.param(
            ['"w0"', "1", *(f'"w{i}"' for i in range(2, 20))],
            '("w0", 1, "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9")',
            id="mixed",
        ),
    ],
)
def test_the_first_half_in_case_order(cases: list, expected: str) -> None:
    assert _first_half(cases) == expected


def test_targets_without_walrus_keep_the_chain() -> None:
    assert "first_equal" not in transpile(INT_SWITCH, target="3.7")
    assert "first_equal" in transpile(INT_SWITCH, target="3.8")


def test_the_run_ends_where_other_patterns_begin() -> None:
    out = transpile(WORD_SWITCH, target="3.9")
    header = out.splitlines()[2]
    # str and int literals: either exact type takes the set lookup
    assert "type(word) is int or type(word) is str" in header
    assert '"async" "for"' in header
    ast.parse(out)
    assert len(out.splitlines()) == len(WORD_SWITCH.splitlines())


PROGRAM = textwrap.dedent("""\
    import enum

    class Log:
        def __init__(self, equal_to, raise_at=None, result=True):
            self.equal_to, self.raise_at, self.result = equal_to, raise_at, result
        def __eq__(self, other):
            print("  eq", repr(other))
            if other == self.raise_at:
                raise ValueError(other)
            return self.result if other == self.equal_to else False
        def __repr__(self):
            return "Log(%r)" % (self.equal_to,)
        __hash__ = None

    class Text(str):
        def __eq__(self, other):
            print("  text eq", repr(other))
            return str.__eq__(self.upper(), other)
        __hash__ = str.__hash__

    class Number(int):
        pass

    class Color(enum.IntEnum):
        RED = 3
        BLUE = 17

    class Truthy:
        def __bool__(self):
            print("  bool")
            return True
        __repr__ = lambda self: "Truthy()"

    """)

SUBJECTS = """\
    *range(-2, 23), True, False, 3.0, 12.0, 17.5, 2 ** 70, "3", "if", "as",
    "async" "for", "with", None, [], ["if"], (1,), Number(4), Number(18),
    Color.RED, Color.BLUE, Text("if"), Text("WITH"), Text("none"),
    Log(5), Log(15), Log(99), Log(3, raise_at=2), Log(17, raise_at=16),
    Log(4, result=Truthy()), Log(0, result=[]), Log("else"), Log("with"),
    Log("return", raise_at="from"),
"""


def _program(functions: str) -> str:
    calls = (
        f"for value in [\n{SUBJECTS}]:\n"
        "    for function in FUNCTIONS:\n"
        "        try:\n"
        "            print(function.__name__, repr(value), function(value))\n"
        "        except Exception as error:\n"
        "            print(function.__name__, repr(value), type(error).__name__, error)\n"
    )
    return PROGRAM + functions + "\n\nFUNCTIONS = [f, g]\n" + calls


# The subject computed once (a temporary stored by the split's first read),
# and a run of mixed int and str literals.
COMPUTED_SWITCH = (
    HEAD
    + textwrap.dedent("""\
    def h(value):
        match print("  subject") or value:
            case 0 | "a":
                return "zero"
            case 1 | 2 | 3 | "if":
                return "small"
    """)
    + "".join(f"        case {i}:\n            return {i}\n" for i in range(4, 16))
    + "    return None\n"
)


def test_a_computed_subject_is_stored_by_the_first_read() -> None:
    out = transpile(COMPUTED_SWITCH, target="3.9")
    assert out.splitlines()[2] == (
        "    if (_spam_literal2 := _spam_subject1 if type(_spam_subject1 := "
        'print("  subject") or value) is int or type(_spam_subject1) is str '
        'else _spam.first_equal(_spam_subject1, (0, "a", 1, 2, 3, "if", 4, 5, 6))) '
        'in {0, "a", 1, 2, 3, "if", 4, 5, 6}:'
    )
    assert "elif _spam_subject1 == 7:" in out


def test_every_kind_of_subject_takes_the_native_case(tmp_path: Path) -> None:
    source = _program(INT_SWITCH + "\n\n" + WORD_SWITCH + "\n\n" + COMPUTED_SWITCH)
    source = source.replace("FUNCTIONS = [f, g]", "FUNCTIONS = [f, g, h]")
    out = transpile(source, target="3.8")
    assert out.count("first_equal(") == 4  # the helper's def, and three splits
    stdout = assert_runs_like_native(source, out, tmp_path, versions=("3.8", "3.9"))
    assert b"  eq 16" in stdout and b"ValueError" in stdout


def test_a_split_in_a_nested_block_keeps_its_columns(tmp_path: Path) -> None:
    source = HEAD + textwrap.dedent("""\
        def f(op):
            for _ in [0]:
                if op is not None:
        """) + textwrap.indent(_switch(18, indent="", subject="op"), " " * 12)
    source += "    return None\n\ng = f\n"
    out = transpile(source, target="3.9")
    assert "first_equal" in out
    assert len(out.splitlines()) == len(source.splitlines())
    assert_runs_like_native(_program(source), transpile(_program(source)), tmp_path)


def test_a_shared_kind_on_the_match_line_keeps_the_run_whole(tmp_path: Path) -> None:
    # (fuzz seed 66: the match line's one statement was the kind the later
    # cases share, which the split's line dropped: UnboundLocalError)
    literals = ["'a' | 3 | -1", "'a'", "8", "'ab'", "16", "5", "12 | '' | 'a'"]
    literals += ["'if' | -1", "'b'", "14", "'b'"]
    cases = "".join(
        f"        case {literal}:\n            return {i}\n"
        for i, literal in enumerate(literals)
    )
    source = (
        "def f(s):\n    match s:\n" + cases + "        case [0, *_] | {} | {}:\n"
        "            return 'container'\n    return None\n\n\ng = f\n"
    )
    out = transpile(source, target="3.9")
    assert "first_equal" not in out
    assert_runs_like_native(_program(source), transpile(_program(source)), tmp_path)
