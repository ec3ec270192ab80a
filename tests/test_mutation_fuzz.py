"""A bounded run of scripts/mutation_fuzz.py: mutants of real match code.

Every mutant must transpile to code that compiles (here, and on the real
target interpreter for a sample) or be refused with a positioned
TranspileError: no internal error, no other exception, no mutant over the
time limit. ``python scripts/mutation_fuzz.py --count 5000`` is the long run.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from tests.script_loader import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "mutation_fuzz.py"


def _load_script() -> ModuleType:
    return load_script(SCRIPT, "mutation_fuzz")


# The script looks the target interpreters up itself, where reading this
# test's code (tests/target_marking.py) cannot see it.
@pytest.mark.targets
@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_mutants_are_lowered_or_refused_with_a_position(seed: int) -> None:
    fuzz = _load_script()
    report = fuzz.run(count=120, seed=seed, jobs=2, time_limit=20.0, target_sample=30)
    assert report.problems == []
    assert report.counts["lowered"] >= 20, report.counts  # the run tested lowering
    assert report.counts["refused"] >= 10, report.counts  # and hostile input


def test_mutations_are_deterministic() -> None:
    import random

    fuzz = _load_script()
    seeds = [
        (
            "s.py",
            "def f(x):\n    match x:\n        case [1, *r]:\n            return r\n",
        )
    ]
    first = [fuzz.mutant(seeds[0][1], random.Random(n)) for n in range(20)]
    again = [fuzz.mutant(seeds[0][1], random.Random(n)) for n in range(20)]
    assert first == again
