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

With --shapes it generates whole programs instead (tests/shapes.py,
ShapeGen): module shapes around the match statements (docstrings and
doctests, __future__ imports, shebang and encoding lines, no blank lines,
a def on line 1, conditionals, loops, class creation that runs code,
annotations evaluated at def time, circular imports, matches in module,
class and Enum bodies, modules of 1-7 lines) and process models (a script,
imported by another module, threads racing ABC registrations, cloudpickle
into a fresh process, exec with two dicts, a spawn pool, the import hook);
each program runs as real processes, until COUNT match statements were
checked, and the run ends with counts per shape and per model:

    python scripts/fuzz.py --shapes --count 2000 --seed 1 --layout keep-lines

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
import shapes  # noqa: E402


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
        "--shapes",
        action="store_true",
        help="generate module shapes and process models (tests/shapes.py)",
    )
    parser.add_argument(
        "--models",
        default=",".join(shapes.MODELS),
        help="with --shapes: comma-separated process models (default: all)",
    )
    parser.add_argument(
        "--shrink-budget",
        type=int,
        default=40,
        help="with --shapes: runs spent shrinking each new kind of mismatch",
    )
    parser.add_argument(
        "--max-defs",
        type=int,
        default=6,
        help="with --shapes: functions with a match per program, at most",
    )
    parser.add_argument(
        "--summary-every",
        type=int,
        default=0,
        help="with --shapes: also print the counts every N programs",
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
    if args.shapes:
        return main_shapes(args)
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


def main_shapes(args: argparse.Namespace) -> int:
    """--shapes: whole programs in random module shapes and process models."""
    targets = args.targets.split(",")
    if args.targets == parse_args([]).targets:
        targets = [t for t in targets if t != "3.8"]  # 3.9 and 3.7 by default
    oracle, found = find_interpreters(targets)
    checker = shapes.ShapeChecker(oracle, found, args.layout)
    rng = random.Random(args.seed)
    models = args.models.split(",")
    per_shape: dict[str, list[int]] = {}
    per_model: dict[str, list[int]] = {}
    kinds: dict[str, list[shapes.ShapeMismatch]] = {}
    skipped: dict[str, int] = {}
    programs = statements = 0
    started = time.monotonic()
    specs = shapes.generate(
        RandomChooser(rng),
        args.count,
        models=models,
        instrumented=not args.no_instrumented,
        max_defs=args.max_defs,
    )
    for spec in specs:
        if not shapes.valid_program(spec):
            print("fuzz: generator bug, mod.py does not compile:")
            print(shapes.module_source(spec))
            return 2
        bad = False
        for target, result in checker.check(spec).items():
            if isinstance(result, str):
                skipped[f"{spec.model} on {target}: {result}"] = 1 + skipped.get(
                    f"{spec.model} on {target}: {result}", 0
                )
            elif result is not None:
                bad = True
                _record_shape_mismatch(checker, result, kinds, args)
        shapes.tally(per_shape, spec.shapes(), spec, bad)
        shapes.tally(per_model, [spec.model], spec, bad)
        programs += 1
        statements += spec.statements()
        if programs % 10 == 0:
            print(
                f"fuzz: {statements}/{args.count} statements, {programs} programs, "
                f"{sum(len(v) for v in kinds.values())} mismatches, "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
        if args.summary_every and programs % args.summary_every == 0:
            _print_shape_summary(args, found, programs, statements, kinds, skipped)
            print(shapes.format_counts("shape", per_shape))
            print(shapes.format_counts("model", per_model), flush=True)
    _print_shape_summary(args, found, programs, statements, kinds, skipped)
    print(shapes.format_counts("shape", per_shape))
    print(shapes.format_counts("model", per_model))
    return 1 if kinds else 0


def _record_shape_mismatch(
    checker: shapes.ShapeChecker,
    found: shapes.ShapeMismatch,
    kinds: dict[str, list[shapes.ShapeMismatch]],
    args: argparse.Namespace,
) -> None:
    """Keep every mismatch by kind; shrink and print the first of each."""
    key = f"{found.target}: {found.signature()}"
    kinds.setdefault(key, []).append(found)
    if len(kinds[key]) == 1 and len(kinds) <= args.max_report:
        small = checker.shrink(found, budget=args.shrink_budget)
        kinds[key][0] = small
        print(f"\n=== mismatch kind #{len(kinds)} on {found.target}: {key}")
        print(small.report(), flush=True)


def _print_shape_summary(
    args: argparse.Namespace,
    targets: dict[str, str],
    programs: int,
    statements: int,
    kinds: dict[str, list[shapes.ShapeMismatch]],
    skipped: dict[str, int],
) -> None:
    total = sum(len(v) for v in kinds.values())
    print(
        f"\nchecked {programs} programs, {statements} match statements on "
        f"{', '.join(targets)} in the {args.layout} layout (oracle CPython "
        f"{ORACLE_VERSION}, seed {args.seed}): {total} mismatching program runs, "
        f"{len(kinds)} kinds:"
    )
    for key, found in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        models = sorted({m.spec.model for m in found})
        print(f"  {len(found):5d} x {key}  (models: {', '.join(models)})")
    for reason, count in sorted(skipped.items()):
        print(f"  skipped {count} x {reason}")


if __name__ == "__main__":
    sys.exit(main())
