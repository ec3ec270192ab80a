"""spam_transpile.lowering.chain_shapes, and the captures a branch stores
first: the readable layout's chains in the shapes a person gives them
(a negated test for a case that does nothing, no ``else`` after cases that
all leave), still running as CPython runs the match."""

from __future__ import annotations

from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from type_check import assert_mypy_clean
from spam_transpile import transpile
from spam_transpile.lowering.chain_shapes import negated

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "fixtures" / "readable" / "chain_shapes.py"


def _readable(source: str, target: str = "3.9") -> str:
    return transpile(source, layout="readable", target=target)


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\ndef ", start + 1)
    end = out.find("\nif __name__", start + 1) if end == -1 else end
    return out[start : end if end != -1 else None]


@pytest.mark.parametrize(
    "test, expected",
    [
        ("a == b", "a != b"),
        ("a != b", "a == b"),
        ("x is None", "x is not None"),
        ("x is not None", "x is None"),
        ('"k" in d', '"k" not in d'),
        ('"k" not in d', '"k" in d'),
        ("(a == b)", "a != b"),
        ("not f(x)", "f(x)"),
        ("isinstance(a, B)", "not isinstance(a, B)"),
        ("flag", "not flag"),
        ("a.b", "not a.b"),
        ("a and b", "not a or not b"),
        ("(a and not b)", "not a or b"),
        (
            "isinstance(x, S) and not isinstance(x, T)",
            "not isinstance(x, S) or isinstance(x, T)",
        ),
        ("a and b < c", "not (a and b < c)"),
        ("a or b", "not (a or b)"),
        # ``not a < b`` is not ``a >= b`` (NaN, sets): kept negated
        ("a < b", "not (a < b)"),
        ("a == b == c", "not (a == b == c)"),
        ("x := f()", None),
    ],
)
def test_a_test_is_negated_as_a_person_spells_it(test: str, expected: object) -> None:
    assert negated(test) == expected


@pytest.mark.parametrize(
    "cases, expected",
    [
        # a case that does nothing before a last one that does: negated
        (
            '        case "a":\n'
            "            pass\n"
            "        case _:\n"
            "            raise ValueError(value)\n",
            '    if value != "a":\n        raise ValueError(value)\n    return 1\n',
        ),
        # an ``else`` after cases that all leave: its statements follow
        (
            "        case int():\n"
            "            return 0\n"
            "        case str():\n"
            "            raise TypeError(value)\n"
            "        case _:\n"
            "            value = None\n",
            "        raise TypeError(value)\n    value = None\n    return 1\n",
        ),
        # ``case _: pass`` last: nothing to write
        (
            "        case int():\n"
            "            value = 0\n"
            "        case _:\n"
            "            pass\n",
            "    if isinstance(value, int):\n        value = 0\n    return 1\n",
        ),
        # a comment on the last case's line stays with its statements
        (
            "        case int():\n"
            "            return 0\n"
            "        case _:  # the rest\n"
            "            value = None\n",
            "        return 0\n    # the rest\n    value = None\n",
        ),
    ],
)
def test_a_chain_takes_a_persons_shape(cases: str, expected: str) -> None:
    source = f"def f(value):\n    match value:\n{cases}    return 1\n"
    out = _readable(source)
    assert expected in out
    assert "else:" not in out


def test_a_case_whose_body_falls_through_keeps_its_else() -> None:
    # the first case's body goes on after the match: the last case's
    # statements would run after it too
    source = (
        "def f(value):\n"
        "    match value:\n"
        "        case int():\n"
        "            value = 0\n"
        "        case _:\n"
        "            value = None\n"
        "    return value\n"
    )
    assert "    else:\n        value = None\n" in _readable(source)


def test_cases_told_apart_by_guards_store_their_captures_first() -> None:
    out = _function(_readable(PROGRAM.read_text("utf-8")), "lookup")
    # CPython stores ``name`` before each guard: stored once, first thing
    assert (
        "    if isinstance(expr, Var):\n"
        "        name = expr.name\n"
        "        if name in scope:\n"
        "            return scope[name]\n"
        "        raise KeyError(name)\n"
    ) in out


def test_a_guard_that_rebinds_a_capture_keeps_its_own_store() -> None:
    source = (
        "def f(value, limit):\n"
        "    match value:\n"
        "        case (x, _) if (x := x * 2) > limit:\n"
        "            return x\n"
        "        case (x, _):\n"
        "            return -x\n"
        "    return 0\n"
    )
    out = _readable(source)
    # the second case stores ``x`` again, undoing the guard's ``:=``
    assert out.count("x = value[0]") + out.count("x := value[0]") == 2


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_the_program_runs_as_natively(target: str, tmp_path: Path) -> None:
    source = PROGRAM.read_text("utf-8")
    out = _readable(source, target)
    assert_runs_like_native(source, out, tmp_path, (target,))


def test_the_program_type_checks(tmp_path: Path) -> None:
    assert_mypy_clean(_readable(PROGRAM.read_text("utf-8")), tmp_path)


LONG_CASE = """\
def f(config):
    match config:
        case {"version": 1, "routes": routes}:
            problems = []
            for route in routes:
                problems.append(route)
            problems.sort()
            problems.reverse()
            return problems
        case _:
            return ["config must be an object"]
"""


def test_a_long_branch_that_leaves_comes_after_its_guard_clause() -> None:
    # ``a and b`` negated plainly: ``not a or not b``
    assert (
        "    if (\n"
        "        not isinstance(config, (dict, Mapping))\n"
        '        or config.get("version") != 1\n'
        '        or "routes" not in config\n'
        "    ):\n"
        '        return ["config must be an object"]\n'
        '    routes = config["routes"]\n'
        "    problems = []\n"
    ) in _readable(LONG_CASE)


def test_a_short_branch_keeps_its_order() -> None:
    source = (
        "def f(value):\n"
        "    match value:\n"
        "        case int():\n"
        "            return value + 1\n"
        "        case _:\n"
        "            return 0\n"
    )
    assert "    if isinstance(value, int):\n        return value + 1\n" in _readable(
        source
    )


def test_an_else_that_leaves_goes_first_as_a_guard_clause() -> None:
    source = (
        "def f(token):\n"
        "    match token:\n"
        '        case {"kind": "name", "text": text}:\n'
        "            pass\n"
        "        case _:\n"
        "            raise ValueError(token)\n"
        "    return text\n"
    )
    # the do-nothing case stores a capture: its ``else`` goes first
    assert (
        "        raise ValueError(token)\n"
        '    text = token["text"]\n'
        "    return text\n"
    ) in _readable(source)


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_guard_clauses_run_as_natively(target: str, tmp_path: Path) -> None:
    calls = (
        "\n\nfor value in [{'version': 1, 'routes': ['b', 'a']}, {'version': 2}, 3]:\n"
        "    print(f(value))\n"
    )
    source = LONG_CASE + calls
    assert_runs_like_native(source, _readable(source, target), tmp_path, (target,))
