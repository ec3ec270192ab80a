"""spam_transpile.lowering.decision_tree: the readable layout nests cases
that open with the same test under it, only where that is exact."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Optional, Set

import pytest

from interpreters import require_interpreter
from spam_transpile import transpile
from spam_transpile.lowering.decision_tree import (
    Branch,
    Leaf,
    decision_tree,
    disjoint,
)
from spam_transpile.lowering.ir import TRUE, All, LoweredPattern
from spam_transpile.lowering.ir import Test as Check

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "fixtures" / "decision_tree").glob("*.py"))


def _readable(path: Path, target: str = "3.9") -> str:
    return transpile(path.read_text("utf-8"), target=target, layout="readable")


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\n\n\n", start)
    return out[start : end if end != -1 else None]


@pytest.mark.parametrize("target", ["3.9", "3.7"])
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_nested_cases_run_as_native_match(
    path: Path, target: str, tmp_path: Path
) -> None:
    lowered = tmp_path / path.name
    lowered.write_text(_readable(path, target), "utf-8")
    native = subprocess.run(
        [require_interpreter("3.10"), str(path)], capture_output=True, timeout=120
    )
    ran = subprocess.run(
        [require_interpreter(target), str(lowered)], capture_output=True, timeout=120
    )
    assert native.returncode == 0, native.stderr.decode()
    assert (ran.returncode, ran.stdout) == (0, native.stdout), ran.stderr.decode()


def test_cases_a_singleton_tells_apart_nest() -> None:
    kinds = _function(_readable(ROOT / "fixtures/decision_tree/singletons.py"), "kinds")
    # the word cases share ``isinstance(subject[1], str)``; the later cases
    # want ``subject[1] is None``: they nest, and share the capture
    assert (
        "                if isinstance(subject[1], str) and subject[2] is None:\n"
        "                    word = subject[1]\n"
        "                    if word in KEYWORDS:\n"
    ) in kinds


def test_a_guard_that_runs_code_keeps_a_stable_field_shared() -> None:
    atom = _function(
        _readable(ROOT / "fixtures/decision_tree/stable_fields.py"), "atom"
    )
    assert (
        '        if token.kind == "name":\n'
        "            name = token.text\n"
        '            if self.peek_text() == "(":\n'
        "                self.take()\n"
        '                return f"call {name}"\n'
        '            return f"var {name}"\n'
    ) in atom


def test_a_stable_path_is_what_keeps_a_code_guards_group_open() -> None:
    name = _test('s.kind == "name"', path="s.kind", fact=("literal", "text"))
    other = _test('s.kind == "num"', path="s.kind", fact=("literal", "text"))
    cases = (_case(name), _case(name), _case(other))
    open_ = decision_tree(cases, {0}, {0}, stable_paths={"s.kind"})
    assert [type(node) for node in open_] == [Branch, Leaf]
    # not stable: the guard may change what ``s.kind`` answers
    closed = decision_tree(cases, {0}, {0})
    assert [type(node) for node in closed] == [Leaf, Leaf, Leaf]


def test_cases_that_return_nest_and_the_rest_follow() -> None:
    evaluate = _function(
        _readable(ROOT / "fixtures/decision_tree/evaluator.py"), "evaluate"
    )
    assert (
        "    elif isinstance(e, Bin):\n"
        "        if e.op == Op.ADD:\n"
        "            if isinstance(e.left, Num) and e.left.value == 0:\n"
    ) in evaluate
    # the add cases' last always matches once ``e.op == Op.ADD`` held: it
    # follows the case before it, which returns, with no ``else``
    assert (
        "                return evaluate(right)\n"
        "            left, right = e.left, e.right\n"
    ) in evaluate
    # a guard that may run code closes its group: the next case tests again
    assert (
        "    if isinstance(e, Bin) and e.op == Op.MUL:\n        return 0\n" in evaluate
    )
    # the final ``case _:`` is its body, its comment on a line of its own
    assert evaluate.endswith("    # anything else\n    raise ValueError(e)")


def test_cases_after_a_group_that_could_still_match_stay_in_the_chain() -> None:
    out = _readable(ROOT / "fixtures/decision_tree/evaluator.py")
    describe = _function(out, "describe")
    # bodies that fall through, and ``case _:`` after: no nesting
    assert "if isinstance(e, Bin) and e.op == Op.ADD:" in describe
    assert '    else:\n        kind = "other"' in describe
    out = _readable(ROOT / "fixtures/decision_tree/exclusive_tests.py")
    # a capture after the group takes what the group leaves: short, it is
    # written twice, as the group's else and after it
    capture = _function(out, "after_a_capture")
    assert "    if size == 2:\n        if s[1] == 1:\n" in capture
    # (``case other:`` reads the subject itself: inlined_captures)
    assert capture.count('print("other", s)') == 2


def test_a_test_the_later_cases_exclude_nests_within_the_chain() -> None:
    out = _readable(ROOT / "fixtures/decision_tree/exclusive_tests.py")
    assert '    if size == 2:\n        if s[1] == "left":\n' in _function(
        out, "lengths"
    )
    assert "    if isinstance(s, (dict, Mapping)):\n" in _function(out, "kinds")


def test_a_guard_that_may_change_the_subject_is_not_skipped_past() -> None:
    out = _readable(ROOT / "fixtures/decision_tree/guards_that_change_the_subject.py")
    which = _function(out, "which")
    assert "    elif isinstance(x, A):\n" in which
    assert "\n    if isinstance(x, A):\n" not in which


def test_module_bodies_keep_one_chain() -> None:
    source = (
        "for s in [[1, 2], [1, 3], 5]:\n"
        "    match s:\n"
        "        case [1, 2]:\n"
        "            print('a')\n"
        "        case [1, 3]:\n"
        "            print('b')\n"
    )
    out = transpile(source, layout="readable")
    # each body deletes the temporaries; an else deletes them otherwise
    assert "elif size == 2 and subject[0] == 1 and subject[1] == 3:" in out


# -- the tree itself ----------------------------------------------------------


def _test(expr: str, kind: str = "eq", path: str = "s", fact: object = None) -> Check:
    return Check(expr, kind, path, fact)


SEQ = _test("isinstance(s, Sequence)", "kind", fact="sequence")
MAP = _test("isinstance(s, Mapping)", "kind", fact="mapping")


def _case(*tests: Check) -> LoweredPattern:
    return LoweredPattern(All(tests) if tests else TRUE, ())


def _tree(
    *patterns: LoweredPattern,
    guarded: Optional[Set[int]] = None,
    code: Optional[Set[int]] = None,
    leaving: int = 0,
    small: Optional[Set[int]] = None,
) -> list:
    guarded = set(guarded or ()) | set(code or ())
    return decision_tree(patterns, guarded, set(code or ()), leaving, small or set())


def test_disjoint_tests() -> None:
    two = _test("len(s) == 2", "len", fact=("==", 2))
    three = _test("len(s) == 3", "len", fact=("==", 3))
    at_least_three = _test("len(s) >= 3", "len", fact=(">=", 3))
    at_least_two = _test("len(s) >= 2", "len", fact=(">=", 2))
    assert disjoint(two, three) and disjoint(two, at_least_three)
    assert disjoint(at_least_three, two)
    assert not disjoint(two, at_least_two) and not disjoint(at_least_two, three)
    assert disjoint(SEQ, MAP) and not disjoint(SEQ, SEQ)
    # another path, or equality with values: nothing is known
    assert not disjoint(two, _test("len(t) == 3", "len", "t", ("==", 3)))
    assert not disjoint(_test("s == 1"), _test("s == 2"))


NONE = _test("s is None", "is", fact="None")
TRUE_ = _test("s is True", "is", fact="True")


def _builtin(name: str) -> bool:
    return name in ("str", "int", "bool", "float")


@pytest.mark.parametrize(
    "one, other, expected",
    [
        (NONE, TRUE_, True),
        (NONE, NONE, False),
        (NONE, SEQ, True),
        (TRUE_, MAP, True),
        (NONE, _test("isinstance(s, str)", "isinstance", fact="str"), True),
        # True is an int
        (TRUE_, _test("isinstance(s, int)", "isinstance", fact="int"), False),
        (TRUE_, _test("isinstance(s, float)", "isinstance", fact="float"), True),
        # a class of the module's own may be anything
        (NONE, _test("isinstance(s, Node)", "isinstance", fact="Node"), False),
        (NONE, _test('s == "end"', fact=("literal", "text")), True),
        (NONE, _test("s == 0", fact=("literal", "number")), True),
        # True == 1
        (TRUE_, _test("s == 1", fact=("literal", "number")), False),
        (TRUE_, _test('s == "x"', fact=("literal", "text")), True),
        # a value pattern's __eq__ may say anything
        (NONE, _test("s == Color.RED"), False),
        # another path
        (NONE, _test("t is True", "is", "t", fact="True"), False),
    ],
)
def test_a_singleton_excludes_what_no_singleton_passes(
    one: Check, other: Check, expected: bool
) -> None:
    assert disjoint(one, other, _builtin) is expected
    assert disjoint(other, one, _builtin) is expected


def test_a_group_nests_where_nothing_follows() -> None:
    a, b = _test("s.a == 1"), _test("s.a == 2")
    (node,) = _tree(_case(SEQ, a), _case(SEQ, b))
    assert isinstance(node, Branch) and node.tests == (SEQ,) and not node.ends_chain
    assert [child.index for child in node.children] == [0, 1]


def test_a_group_does_not_nest_where_a_later_case_could_match() -> None:
    a, b = _test("s.a == 1"), _test("s.a == 2")
    nodes = _tree(_case(SEQ, a), _case(SEQ, b), _case())
    assert all(isinstance(node, Leaf) for node in nodes)
    # ... unless every body before it leaves: then it ends the chain
    nodes = _tree(_case(SEQ, a), _case(SEQ, b), _case(), leaving=2)
    assert isinstance(nodes[0], Branch) and nodes[0].ends_chain


def test_a_guard_that_may_run_code_closes_its_group() -> None:
    a, b, c = _test("s.a == 1"), _test("s.a == 2"), _test("s.a == 3")
    nodes = _tree(_case(SEQ, a), _case(SEQ, b), _case(SEQ, c), code={1}, leaving=3)
    assert isinstance(nodes[0], Branch) and nodes[0].ends_chain
    assert [child.index for child in nodes[0].children] == [0, 1]
    assert isinstance(nodes[1], Leaf) and nodes[1].index == 2
    # a guard that runs no code keeps the group open
    nodes = _tree(_case(SEQ, a), _case(SEQ, b), _case(SEQ, c), guarded={1})
    assert isinstance(nodes[0], Branch) and len(nodes[0].children) == 3


def test_a_short_default_is_written_twice_to_nest_a_dispatch() -> None:
    out = _readable(ROOT / "fixtures/decision_tree/default_case.py")
    step = _function(out, "step")
    assert step.startswith(
        # (the match does not end the function: no spelling for mypy to
        # follow to its end, and the shorter lines flake8 asks for)
        "def step(instr: object, stack: list) -> list:\n"
        "    if isinstance(instr, (list, tuple, Sequence)) and not isinstance(\n"
        "        instr, (str, bytes, bytearray)\n"
        "    ):\n"
        "        size = len(instr)\n"
        '        if size == 2 and instr[0] == "PUSH":\n'
    )
    assert step.count('stack.append(("bad", instr))\n') == 2
    assert step.endswith(
        "        else:\n"
        '            stack.append(("bad", instr))\n'
        "    else:\n"
        '        stack.append(("bad", instr))\n'
        "    return stack"
    )
    # a default with a comment is not copied: no nesting
    assert "if isinstance(value, (dict, Mapping)) and" in _function(out, "kind")


def test_the_copy_of_the_default_is_made_once() -> None:
    a, b = _test("s.a == 1"), _test("s.a == 2")
    nodes = _tree(_case(SEQ, a), _case(SEQ, b), _case(), small={2})
    assert [type(node) for node in nodes] == [Branch, Leaf]
    branch = nodes[0]
    assert isinstance(branch, Branch)
    copies = [c for c in branch.children if isinstance(c, Leaf) and c.copy]
    assert [c.index for c in copies] == [2]
    # not small, or guarded: no copy, no nesting
    assert all(
        isinstance(node, Leaf)
        for node in _tree(_case(SEQ, a), _case(SEQ, b), _case(), small=set())
    )
    assert all(
        isinstance(node, Leaf)
        for node in _tree(_case(SEQ, a), _case(SEQ, b), _case(), small={2}, guarded={2})
    )


def test_a_branch_on_the_sequence_check_measures_the_length_once() -> None:
    out = _readable(ROOT / "fixtures/decision_tree/lengths_in_branch.py")
    dispatch = _function(out, "dispatch")
    # (the branch's one test negated into a guard clause first,
    # chain_shapes; spelled so that black splits it: on one line it would
    # be 86 columns, which flake8's default 79 rejects and black keeps)
    assert dispatch.startswith(
        "def dispatch(instr: object) -> object:\n"
        "    if not isinstance(instr, (list, tuple, Sequence)) or isinstance(\n"
        "        instr, (str, bytes, bytearray)\n"
        "    ):\n"
        '        return "other"\n'
        "    size = len(instr)\n"
        '    if size == 2 and instr[0] == "push":\n'
    )
    assert "len(instr)" not in dispatch.replace("size = len(instr)", "", 1)
    # the first case under the branch takes no length (``[*rest]``): none
    # is taken before CPython takes one
    star_first = _function(out, "star_first")
    assert "if isinstance(instr, (list, tuple, Sequence)) and not isinstance(\n" in (
        star_first
    )
    assert "= len(instr)" not in star_first


def test_a_shared_later_check_is_tested_first_to_nest_the_cases() -> None:
    a, b = _test("s.f == 1", path="s.f"), _test("s.f == 2", path="s.f")
    args = _test("isinstance(s.a, Sequence)", "kind", "s.a", "sequence")
    one = _test("len(s.a) == 1", "len", "s.a", ("==", 1))
    nodes = _tree(_case(a, args, one), _case(b, args))
    assert isinstance(nodes[0], Branch) and nodes[0].tests == (args,)
    first, second = nodes[0].children
    assert isinstance(first, Leaf) and first.pattern.cond == All((a, one))
    assert isinstance(second, Leaf) and second.pattern.cond == b
    # where the cases would not nest (a later case may still match), their
    # tests stay in their order
    nodes = _tree(_case(a, args, one), _case(b, args), _case(_test("x", path="t")))
    assert [n.pattern.cond for n in nodes[:2]] == [All((a, args, one)), All((b, args))]


def test_a_check_that_needs_an_earlier_one_is_not_moved() -> None:
    size = _test("len(s) == 2", "len", "s", ("==", 2))
    item = _test("isinstance(s[1], str)", "isinstance", "s[1]", "str")
    a, b = _test("t == 1", path="t"), _test("t == 2", path="t")
    nodes = _tree(_case(a, size, item), _case(b, size, item))
    # the item needs the length, a length test is no class or kind check
    assert all(isinstance(node, Leaf) for node in nodes)


def test_the_program_with_a_shared_later_check_nests_it() -> None:
    out = _readable(ROOT / "fixtures/decision_tree/shared_later_test.py")
    arity = _function(out, "arity")
    assert '            if expr.func == "abs" and len(expr.args) == 1:\n' in arity
    assert "    return None" in arity and arity.count("isinstance(expr.args") == 1
    # a key's value needs the key: each case tests it after its own literal
    assert _function(out, "keyed").count('"items" in event') == 2
