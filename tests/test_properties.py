"""Property tests: random match statements x random subjects behave the same
natively on CPython 3.10 and transpiled on 3.9/3.8.

The generator (tests/difftest.py, `ProgramGen`) makes only patterns CPython
accepts: literals, captures, wildcards, value patterns, sequences with and
without a star, mappings with and without `**rest`, class patterns over a
dataclass, a plain class, a namedtuple and builtins, or-patterns whose
alternatives bind the same names, as-patterns and groups; guards that print
when they run. Subjects are atoms, nested lists/tuples/deques/dicts,
instances, generators, and instrumented sequences/mappings, and classes whose
kind comes from the ABCs (registered after creation, both ABCs as bases in
either order, `str`/`list` subclasses registered as the other kind); most are
built to match one of the statement's cases. A statement runs in a function,
a closure, a class body or at module level.

Each program holds several statements x subjects and runs in one subprocess per
interpreter, so the whole file stays well under 30 s:
- `test_seeded_batch` checks one large random.Random(seed) program per target
  and shrinks a difference to one statement, one subject, fewest cases;
- `test_hypothesis_programs` draws small programs with hypothesis
  (derandomized, bounded examples); a failure is minimised by our shrinker,
  or by hypothesis' with SPAM_TRANSPILE_HYPOTHESIS_SHRINK=1 (slow);
- `test_generator_makes_valid_programs` checks the generator itself.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from difftest import (  # noqa: I001
    ORACLE_VERSION,
    TARGET_VERSIONS,
    ProgramGen,
    RandomChecker,
    RandomChooser,
    RandomProgram,
    random_program,
)
import difftest
from interpreters import require_interpreter
from spam_transpile.lowering import case_headers

# Property tests (generated programs run on every target): out of the fast loop.
pytestmark = pytest.mark.slow

# The generated programs' prelude uses dataclasses, which 3.6 lacks; 3.6 is
# covered by test_semantics' programs that do not need them.
PROPERTY_TARGETS = tuple(v for v in TARGET_VERSIONS if v != "3.6")

SEED = 20240610

# Hypothesis' own shrinker needs hundreds of examples, each a transpile and two
# interpreter runs: minutes. By default a failing example is minimised by
# RandomChecker.shrink instead (one statement, one subject, simplest
# patterns: seconds); set this to 1 to let hypothesis shrink the draws too.
HYPOTHESIS_SHRINK = os.environ.get("SPAM_TRANSPILE_HYPOTHESIS_SHRINK", "") not in (
    "",
    "0",
)
PHASES = (Phase.explicit, Phase.reuse, Phase.generate) + (
    (Phase.shrink,) if HYPOTHESIS_SHRINK else ()
)
BATCH_STATEMENTS = 150
BATCH_SUBJECTS = 12

needs_match_syntax = pytest.mark.skipif(
    sys.version_info < (3, 10), reason="compile() of match needs Python 3.10+"
)


class HypothesisChooser:
    """Chooser over hypothesis' `data`: every choice is a shrinkable draw."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))


def _checker(target: str) -> RandomChecker:
    oracle = require_interpreter(ORACLE_VERSION)
    return RandomChecker(oracle, {target: require_interpreter(target)})


def _assert_no_mismatch(
    checker: RandomChecker, program: RandomProgram, shrink: bool
) -> None:
    problem = checker.compile_error(program)
    assert problem is None, f"generator made an invalid program: {problem}"
    mismatches = checker.check(program, shrink=shrink)
    assert not mismatches, "\n\n".join(m.report() for m in mismatches[:3])


@pytest.mark.parametrize("target", PROPERTY_TARGETS, ids=lambda v: f"py{v}")
def test_seeded_batch(target: str) -> None:
    checker = _checker(target)
    gen = ProgramGen(RandomChooser(random.Random(SEED)))
    program = random_program(gen, BATCH_STATEMENTS, BATCH_SUBJECTS)
    _assert_no_mismatch(checker, program, shrink=True)


@pytest.mark.parametrize("target", ["3.9", "3.7"], ids=lambda v: f"py{v}")
def test_seeded_batch_readable_layout(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What --in-place writes: 3.9 (walrus) and 3.7 (stores through cells).
    monkeypatch.setattr(difftest, "LAYOUT", difftest.LAYOUT)
    monkeypatch.setenv("DIFFTEST_HIDDEN_NAMES", "")
    monkeypatch.setenv("DIFFTEST_ABC_KINDS", "")
    difftest.use_layout("readable")
    checker = _checker(target)
    gen = ProgramGen(RandomChooser(random.Random(SEED + 1)))
    program = random_program(gen, BATCH_STATEMENTS, BATCH_SUBJECTS)
    _assert_no_mismatch(checker, program, shrink=True)


@pytest.mark.parametrize("target", ["3.9", "3.7"], ids=lambda v: f"py{v}")
def test_seeded_batch_compact_checks(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every case as if its line were too wide: the compact checks (the
    # helper's kind alone, hasattr(), cls() alone) and a header's checks
    # moved down its lines must match the same as the usual spellings.
    monkeypatch.setattr(case_headers, "WIDEST", 0)
    checker = _checker(target)
    gen = ProgramGen(RandomChooser(random.Random(SEED + 2)))
    program = random_program(gen, BATCH_STATEMENTS, BATCH_SUBJECTS)
    _assert_no_mismatch(checker, program, shrink=True)


@pytest.mark.parametrize("target", PROPERTY_TARGETS, ids=lambda v: f"py{v}")
@settings(
    derandomize=True,
    max_examples=15,
    deadline=None,
    database=None,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hypothesis_programs(target: str, data: st.DataObject) -> None:
    checker = _checker(target)
    ch = HypothesisChooser(data)
    program = random_program(ProgramGen(ch), ch.integer(1, 4), ch.integer(1, 6))
    _assert_no_mismatch(checker, program, shrink=not HYPOTHESIS_SHRINK)


@needs_match_syntax
def test_generator_makes_valid_programs() -> None:
    """Every generated statement compiles on this (3.10+) interpreter: the
    generator respects CPython's rules (no name bound twice, alternatives bind
    the same names, irrefutable case only last, no duplicate literal keys)."""
    for seed in range(40):
        gen = ProgramGen(RandomChooser(random.Random(seed)))
        program = random_program(gen, 25, 2)
        compile(program.source(), f"<seed {seed}>", "exec")


@needs_match_syntax
@settings(derandomize=True, max_examples=60, deadline=None, database=None)
@given(data=st.data())
def test_generator_valid_under_hypothesis(data: st.DataObject) -> None:
    ch = HypothesisChooser(data)
    program = random_program(ProgramGen(ch), 3, 1)
    compile(program.source(), "<hypothesis>", "exec")


@pytest.mark.parametrize("abc_kinds", ["", "1"])
def test_hybrid_mappings_copy_as_mappings(abc_kinds: str, tmp_path) -> None:
    """The fuzz's hybrid mappings copy as a ``dict`` (``**rest``: keys,
    then an item per key) without raising, whichever int keys they hold.
    CPython copies where the sub-pattern matched, the lowering only once the
    whole pattern did (PEP 634 leaves it open): an item read that raised
    would be a difference no program may rely on, reported as a mismatch."""
    (tmp_path / "dt.py").write_text(difftest.HELPERS)
    check = (
        "import dt\n"
        f"for name in {difftest.HYBRID_MAPPINGS!r}:\n"
        "    value = getattr(dt, name)([], {0: 'a', 1: 'b', -1: 'c', 'k': 0})\n"
        "    assert dict(zip(value.keys(), map(value.__getitem__, value.keys())))"
        " == {0: 'a', 1: 'b', -1: 'c', 'k': 0}, name\n"
    )
    env = dict(os.environ, DIFFTEST_ABC_KINDS=abc_kinds)
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=tmp_path, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()
