"""spam_transpile.lowering.shared_tests: in the keep-lines layout, the
opening tests consecutive cases share are made once, by the first case of
the group, and only where that is exact."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

import pytest

from like_native import assert_runs_like_native
from spam_transpile import transpile
from spam_transpile.lowering.ir import All, LoweredPattern
from spam_transpile.lowering.ir import Test as Check
from spam_transpile.lowering.shared_tests import share_opening_tests

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "fixtures" / "shared_tests").glob("*.py"))


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\ndef ", start + 1)
    return out[start : end if end != -1 else None]


def _lowered(path: Path, target: str = "3.9") -> str:
    return transpile(path.read_text("utf-8"), target=target)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_shared_tests_run_as_native_match(path: Path, tmp_path: Path) -> None:
    source = path.read_text("utf-8")
    for target in ("3.9", "3.8"):
        out = transpile(source, target=target)
        assert_runs_like_native(source, out, tmp_path, (target,))


def test_a_group_of_class_cases_checks_the_class_and_reads_its_fields_once() -> None:
    operator = _function(
        _lowered(ROOT / "fixtures/shared_tests/class_groups.py"), "operator"
    )
    # ``ast.BinOp`` is a class with these fields on every target
    # (stdlib_table): one isinstance call for the four cases, no helper
    assert operator.count("isinstance(node, ast.BinOp)") == 1
    assert "_spam.attrs(" not in operator and "_spam.cls(" not in operator
    assert operator.count("(left := getattr(node, 'left'") == 1
    lines = operator.splitlines()
    opened = next(line for line in lines if "ast.Add" in line)
    flag = opened.split(":=")[0].split("(")[-1].strip()
    assert flag.startswith("_spam_shared")
    assert (
        next(line for line in lines if "ast.Sub" in line)
        .lstrip()
        .startswith(f"elif {flag} and ")
    )


def test_the_line_numbers_stay() -> None:
    for path in PROGRAMS:
        source = path.read_text("utf-8")
        assert len(_lowered(path).splitlines()) == len(source.splitlines())


@pytest.mark.parametrize(
    "name, shared",
    [
        # the first case captures ``Y``, its guard fails, the next reads ``Y.a``
        ("captured_then_read", False),
        # the guard's ``:=`` rebinds ``Y``: the group starts after that case
        ("walrus_in_guard", True),
        # ``v`` is both the subject and a capture: the subject is a temporary
        ("subject_captured", True),
        # a guard that may run code ends the group (and the facts)
        ("guard_runs_code", False),
    ],
)
def test_groups_end_where_a_name_the_tests_read_may_change(
    name: str, shared: bool
) -> None:
    out = _lowered(ROOT / "fixtures/shared_tests/guards_that_rebind.py")
    function = _function(out, name)
    assert ("_spam_shared" in function) is shared
    if name == "walrus_in_guard":
        second = next(line for line in function.splitlines() if "s[1] == 1" in line)
        assert ":= " in second.split(" and ")[0]  # the group's first case


def test_a_function_that_reads_its_frame_gets_no_flag() -> None:
    source = (
        "def f(node):\n"
        "    print(locals())\n"
        "    match node:\n"
        "        case C(1, b):\n"
        "            return b\n"
        "        case C(2, b):\n"
        "            return b\n"
    )
    assert "_spam_shared" not in transpile(source)
    assert "_spam_shared" in transpile(source.replace("print(locals())", "pass"))


def test_the_readable_layout_nests_instead() -> None:
    out = transpile(
        (ROOT / "fixtures/shared_tests/class_groups.py").read_text("utf-8"),
        layout="readable",
    )
    assert "_spam_shared" not in out


# -- the pass on its own ------------------------------------------------------


def _case(*tests: Check) -> LoweredPattern:
    return LoweredPattern(All(tests), ())


def _shared(
    patterns: Sequence[LoweredPattern], can_follow: Optional[List[bool]] = None
) -> List[str]:
    names = iter(f"flag{i}" for i in range(1, 10))
    out = share_opening_tests(
        patterns, can_follow or [True] * len(patterns), lambda: next(names)
    )
    texts = []
    for pattern in out:
        parts = pattern.cond.parts if isinstance(pattern.cond, All) else (pattern.cond,)
        texts.append(" and ".join(part.expr for part in parts))  # type: ignore[union-attr]
    return texts


IS_A = Check("isinstance(v, A)", "isinstance", "v")
IS_B = Check("isinstance(v, B)", "isinstance", "v")
X1 = Check("v.x == 1", "eq", "v.x")
X2 = Check("v.x == 2", "eq", "v.x")


def test_the_first_case_stores_the_flag_and_the_next_read_it() -> None:
    assert _shared([_case(IS_A, X1), _case(IS_A, X2), _case(IS_B)]) == [
        "(flag1 := isinstance(v, A)) and v.x == 1",
        "flag1 and v.x == 2",
        "isinstance(v, B)",
    ]


def test_the_group_shares_what_all_its_cases_open_with() -> None:
    assert _shared([_case(IS_A, X1), _case(IS_A, X1, X2), _case(IS_A, X2)]) == [
        "(flag1 := isinstance(v, A)) and v.x == 1",
        "flag1 and v.x == 1 and v.x == 2",
        "flag1 and v.x == 2",
    ]


def test_a_case_that_may_change_what_was_read_ends_the_group() -> None:
    assert _shared(
        [_case(IS_A, X1), _case(IS_A, X2), _case(IS_A)], [False, True, True]
    ) == [
        "isinstance(v, A) and v.x == 1",
        "(flag1 := isinstance(v, A)) and v.x == 2",
        "flag1",
    ]


def test_cases_that_share_more_share_a_flag_of_their_own() -> None:
    assert _shared(
        [_case(IS_A, IS_B, X1), _case(IS_A, IS_B, X2), _case(IS_A, X1), _case(IS_B)]
    ) == [
        "(flag2 := (flag1 := isinstance(v, A)) and isinstance(v, B)) and v.x == 1",
        "flag2 and v.x == 2",
        "flag1 and v.x == 1",
        "isinstance(v, B)",
    ]


def test_cheap_tests_and_lone_equalities_keep_their_test() -> None:
    fact = Check("_spam_len1 == 2", "len", "v", ("==", 2), cheap=True)
    literal = Check("v == 1", "eq", "v")
    cases = [_case(fact, X1), _case(fact, X2), _case(literal), _case(literal, X1)]
    assert _shared(cases) == [
        "_spam_len1 == 2 and v.x == 1",
        "_spam_len1 == 2 and v.x == 2",
        "v == 1",
        "v == 1 and v.x == 1",
    ]


def test_a_test_placed_on_a_later_line_is_not_shared() -> None:
    placed = Check("isinstance(v, A)", "isinstance", "v", line=1)
    assert _shared([_case(placed, X1), _case(placed, X2)]) == [
        "isinstance(v, A) and v.x == 1",
        "isinstance(v, A) and v.x == 2",
    ]


def _present(store: str = "") -> Check:
    read = "getattr(v, 'x', M)"
    text = f"({store} := {read}) is not M" if store else f"{read} is not M"
    return Check(text, "attr", "v", "x")


def test_a_presence_test_that_stores_answers_one_that_only_tests() -> None:
    cases = [
        _case(IS_A, _present("x"), X1),
        _case(IS_A, _present(), X2),
        _case(IS_A, _present("y")),
    ]
    first, second, third = _shared(cases)
    assert first == (
        "(flag2 := (flag1 := isinstance(v, A))"
        " and (x := getattr(v, 'x', M)) is not M) and v.x == 1"
    )
    assert second == "flag2 and v.x == 2"
    # it stores a capture of its own: its test is not the first's
    assert third == "flag1 and (y := getattr(v, 'x', M)) is not M"


def test_a_wildcard_case_after_capturing_ones_reads_their_flag() -> None:
    operator = _function(
        _lowered(ROOT / "fixtures/shared_tests/class_groups.py"), "operator"
    )
    third = next(line for line in operator.splitlines() if "ast.Mult" in line)
    assert third.lstrip().startswith("elif _spam_shared2 and (isinstance(")
