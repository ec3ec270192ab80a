"""Unreachable-case warnings: right when given, and never given when unsure."""

from __future__ import annotations

import libcst as cst
import pytest

from spam_transpile import transpile_with_warnings
from spam_transpile.checks.reachability import unreachable_cases


def _unreachable(cases: str) -> list:
    source = "match s:\n" + "".join(f"    case {c}: pass\n" for c in cases.split(";"))
    match = cst.parse_module(source).body[0]
    assert isinstance(match, cst.Match)
    return unreachable_cases(match)


@pytest.mark.parametrize(
    ("cases", "expected"),
    [
        pytest.param("_, 0; 0, _; 0, 0; _, _", [(2, (0,))], id="the-talk-example"),
        pytest.param("[1, *_]; [1, 2, 3]", [(1, (0,))], id="star-covers-fixed-length"),
        pytest.param("[*_, 0]; [1, *_, 9, 0]", [(1, (0,))], id="star-covers-star"),
        pytest.param("1 | 2; 2", [(1, (0,))], id="or-alternative"),
        pytest.param("1; 1 | 2", [], id="or-only-partly-covered"),
        pytest.param("1 | 2; 3; (2 | 3) as x", [(2, (0, 1))], id="as-or-piecewise"),
        pytest.param("1; 2; 1 | 2", [(2, (0, 1))], id="or-covered-piecewise"),
        pytest.param("'a' 'b'; 'ab'", [(1, (0,))], id="same-string-value"),
        pytest.param("None; None", [(1, (0,))], id="singleton"),
        pytest.param("Color.RED; Color.RED", [(1, (0,))], id="same-value-pattern"),
        pytest.param(
            "{'a': 1}; {'a': 1, 'b': x}", [(1, (0,))], id="mapping-fewer-keys"
        ),
        pytest.param("{'a': 1, **rest}; {'a': 1}", [(1, (0,))], id="mapping-rest"),
        pytest.param("P(x, y=0); P(1, y=0, z=2)", [(1, (0,))], id="class-keywords"),
        pytest.param("int(x); int(5)", [(1, (0,))], id="self-matching-builtin"),
        pytest.param("[a, b] as pair; (1, 2)", [(1, (0,))], id="as-pattern"),
        pytest.param("(1, 2); [1, 2] as pair", [(1, (0,))], id="as-pattern-later"),
    ],
)
def test_unreachable_cases_are_found(cases: str, expected: list) -> None:
    assert _unreachable(cases) == expected


@pytest.mark.parametrize(
    "cases",
    [
        pytest.param("1; 1.0", id="equal-but-different-literals"),
        pytest.param("1; True", id="one-and-true"),
        pytest.param("0; False", id="zero-and-false"),
        pytest.param("str(); 'a'", id="class-does-not-cover-literal"),
        pytest.param("P(); Q()", id="different-classes"),
        pytest.param("P(x); P(y=1)", id="positional-vs-keyword-unknown"),
        pytest.param("[1, 2]; [1, 2, 3]", id="different-lengths"),
        pytest.param("[1, *_]; [*_]", id="star-may-be-shorter"),
        pytest.param("{'a': 1}; {'b': 1}", id="different-keys"),
        pytest.param("K.A; K.B", id="different-values"),
        pytest.param("(1, 2); [1, 3]", id="different-items"),
    ],
)
def test_no_warning_when_coverage_is_not_certain(cases: str) -> None:
    assert _unreachable(cases) == []


def test_guarded_case_covers_nothing() -> None:
    source = "match s:\n    case x if x:\n        pass\n    case 1:\n        pass\n"
    assert unreachable_cases(cst.parse_module(source).body[0]) == []  # type: ignore[arg-type]


def test_warnings_carry_positions_and_do_not_change_output() -> None:
    source = (
        "def f(n):\n"
        "    match n % 5, n % 3:\n"
        "        case _, 0: return 1\n"
        "        case 0, _: return 2\n"
        "        case 0, 0: return 3\n"
        "        case _, _: return 4\n"
    )
    output, warnings = transpile_with_warnings(source, filename="talk.py")
    # the third case: caught by the first (anything ending in 0)
    assert [w.format() for w in warnings] == [
        "talk.py:5:9: warning: unreachable case: the case on line 3 matches "
        "everything it matches"
    ]
    assert output.count("\n") == source.count("\n")


@pytest.mark.slow
def test_warnings_are_never_wrong_on_random_programs() -> None:
    """Every case warned about stays silent when CPython 3.10 runs the program
    on subjects built to match each case (the fuzzer's generator)."""
    import random
    import re

    from difftest import (
        ORACLE_VERSION,
        Program,
        ProgramGen,
        RandomChooser,
        random_program,
        run_native,
    )
    from tests.interpreters import require_interpreter

    program = random_program(ProgramGen(RandomChooser(random.Random(5))), 400, 12)
    source = program.source()
    _, warnings = transpile_with_warnings(source)
    lines = source.splitlines()
    silent = set()
    for warning in warnings:
        case_index = int(
            re.search(r"print\('case', (\d+)", lines[warning.lineno]).group(1)
        )
        # Statement i is `def f{i}(s):` or, at module level, `for s in each(i):`.
        function = next(
            "f" + (found.group(1) or found.group(2))
            for found in (
                re.match(r"def f(\d+)\(|for s in each\((\d+)\)", lines[i])
                for i in range(warning.lineno - 1, -1, -1)
            )
            if found
        )
        silent.add((function, case_index))
    assert len(silent) >= 20, "the generator should produce unreachable cases"
    native = run_native(
        [Program("reachability", source)], require_interpreter(ORACLE_VERSION)
    )
    outcome = native["reachability"]
    assert outcome.problem is None and outcome.error is None, outcome
    current = None
    ran = set()
    for line in outcome.stdout.splitlines():
        if line.startswith("== "):
            current = line[3:].split("/")[0]
        elif line.startswith("case ") and current is not None:
            ran.add((current, int(line.split()[1])))
    assert silent & ran == set()
    assert ran, "the program should run some cases"


class _EveryEarlierCase:
    """The plain definition: a case may be covered by any earlier case."""

    def __init__(self) -> None:
        self.cases: list = []

    def add(self, index: int, p: cst.MatchPattern) -> None:
        self.cases.append((index, p))

    def candidates(self, q: cst.MatchPattern) -> list:
        return self.cases


@pytest.mark.slow
def test_cases_compared_by_head_find_what_every_pair_finds(monkeypatch) -> None:
    import random

    import spam_transpile.checks.reachability as reachability
    from difftest import ProgramGen, RandomChooser, random_program

    matches: list = []

    class Collect(cst.CSTVisitor):
        def visit_Match(self, node: cst.Match) -> None:
            matches.append(node)

    for seed in range(3):
        chooser = RandomChooser(random.Random(seed))
        program = random_program(ProgramGen(chooser), 200, 12)
        cst.parse_module(program.source()).visit(Collect())
    assert len(matches) > 100
    by_head = [unreachable_cases(match) for match in matches]
    monkeypatch.setattr(reachability, "_Earlier", _EveryEarlierCase)
    every_pair = [unreachable_cases(match) for match in matches]
    assert by_head == every_pair
    assert sum(map(bool, every_pair)) > 20, "the programs should have some"
