"""A bounded run of scripts/mutation_fuzz.py: mutants of real match code.

Every mutant must transpile to code that compiles (here, and on the real
target interpreter for a sample) or be refused with a positioned
TranspileError: no internal error, no other exception, no mutant over the
time limit. ``python scripts/mutation_fuzz.py --count 5000`` is the long run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "mutation_fuzz.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("mutation_fuzz", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


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
