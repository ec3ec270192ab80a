#!/usr/bin/env python3
"""Long differential fuzzing of spam_transpile against CPython 3.10.

    python scripts/fuzz.py --count 10000 --seed 1

generates COUNT random match statements (see tests/difftest.py, ProgramGen:
in functions, closures, class bodies and at module level, over subjects that
include classes whose kind comes from late ABC registrations),
runs each on SUBJECTS random subjects natively on CPython 3.10 and transpiled
on each target (3.9 and 3.8 by default), BATCH statements per subprocess, and
prints how many programs, statements and statement x subject cases it checked.
Every difference is shrunk to a single statement, a single subject and the
fewest cases, and printed with its program text. Exit status 1 if any.

The same seed gives the same programs (the run is reproducible); interpreters
are found as in tests/interpreters.py (SPAM_TRANSPILE_PYTHON_3_9=..., PATH,
pyenv).
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from difftest import (  # noqa: E402
    ORACLE_VERSION,
    TARGET_VERSIONS,
    ProgramGen,
    RandomChecker,
    RandomChooser,
    RandomMismatch,
    random_program,
)
import difftest  # noqa: E402
from interpreters import find_interpreter  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="match statements")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--subjects", type=int, default=12, help="subjects per statement"
    )
    parser.add_argument("--batch", type=int, default=200, help="statements per program")
    parser.add_argument(
        "--targets",
        # 3.6 lacks dataclasses, which the generated programs use.
        default=",".join(v for v in TARGET_VERSIONS if v != "3.6"),
        help="comma-separated target versions (default: %(default)s)",
    )
    parser.add_argument(
        "--layout",
        choices=["keep-lines", "readable"],
        default="keep-lines",
        help="the layout to transpile to (default: %(default)s)",
    )
    parser.add_argument(
        "--no-instrumented",
        action="store_true",
        help="no LogSeq/LogMap subjects (ignore protocol-call differences)",
    )
    parser.add_argument(
        "--max-report", type=int, default=10, help="kinds of mismatch to print"
    )
    parser.add_argument(
        "--per-program",
        type=int,
        default=3,
        help="mismatching statements to shrink per program and target",
    )
    return parser.parse_args(argv)


def find_interpreters(targets: list[str]) -> tuple[str, dict[str, str]]:
    oracle = find_interpreter(ORACLE_VERSION)
    if oracle is None:
        sys.exit(f"fuzz: CPython {ORACLE_VERSION} (the oracle) not found")
    found = {}
    for version in targets:
        exe = find_interpreter(version)
        if exe is None:
            print(f"fuzz: CPython {version} not found, skipping that target")
        else:
            found[version] = exe
    if not found:
        sys.exit("fuzz: no target interpreter found")
    return oracle, found


def _normalize(text: str) -> str:
    return re.sub(r"\d+|'[^']*'|\"[^\"]*\"|_spam\w*", "~", text)[:160]


def signature(m: RandomMismatch) -> str:
    """What kind of difference this is, to print each kind of bug once: the
    transpiler's error message, or the first output line that differs, with
    numbers, strings and generated names blanked out."""
    if m.actual.problem:
        return "problem: " + _normalize(m.actual.problem)
    want = m.oracle.stdout.splitlines() if m.oracle else []
    got = m.actual.stdout.splitlines()
    for line in difflib.ndiff(want, got):
        if line[:1] in "+-":
            return "output: " + _normalize(line)
    return f"error: {m.oracle.error if m.oracle else None} -> {m.actual.error}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    difftest.use_layout(args.layout)
    oracle, targets = find_interpreters(args.targets.split(","))
    checker = RandomChecker(oracle, targets)
    rng = random.Random(args.seed)
    gen = ProgramGen(RandomChooser(rng), instrumented=not args.no_instrumented)
    programs = statements = cases = 0
    mismatches: list[RandomMismatch] = []
    kinds: dict[str, int] = {}  # signature -> how many programs showed it
    scopes: dict[str, int] = {}  # where the statements ran -> how many
    started = time.monotonic()
    while statements < args.count:
        n = min(args.batch, args.count - statements)
        program = random_program(gen, n, args.subjects)
        problem = checker.compile_error(program)
        if problem:
            print(f"fuzz: generator bug, program does not compile: {problem}")
            return 2
        for m in checker.check(program, shrink=True, limit=args.per_program):
            mismatches.append(m)
            key = signature(m)
            kinds[key] = kinds.get(key, 0) + 1
            if kinds[key] == 1 and len(kinds) <= args.max_report:
                print(f"\n=== mismatch #{len(mismatches)} on {m.target}: {key}")
                print(m.report())
        for spec in program.specs:
            scopes[spec.scope] = scopes.get(spec.scope, 0) + 1
        programs += 1
        statements += n
        cases += program.cases()
        print(
            f"fuzz: {statements}/{args.count} statements, {programs} programs, "
            f"{len(mismatches)} mismatches, {time.monotonic() - started:.0f} s",
            flush=True,
        )
    print(
        f"\nchecked {programs} programs, {statements} match statements, "
        f"{cases} statement x subject cases on {', '.join(targets)} "
        f"(oracle CPython {ORACLE_VERSION}, seed {args.seed}): "
        f"{len(mismatches)} mismatches (shrunk statements), {len(kinds)} kinds:"
    )
    print(
        "  statements per scope: "
        + ", ".join(f"{scope} {count}" for scope, count in sorted(scopes.items()))
    )
    for key, count in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"  {count:5d} x {key}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
