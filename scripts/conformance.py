#!/usr/bin/env python3
"""Run CPython 3.10's test_patma, lowered by spam_transpile, on older CPythons.

    python scripts/conformance.py                      # 3.9
    python scripts/conformance.py --python 3.9 --python 3.8 -v
    python scripts/conformance.py -k test_patma_04 -v  # only ids containing it
    python scripts/conformance.py --python 3.10 --no-transpile  # checks the split

Prints ``3.9: 266/266 passed`` per interpreter; exits 1 if any test fails and
2 if an interpreter or test_patma.py cannot be found. The splitting and
running live in tests/patma_split.py, shared with tests/test_conformance.py.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The helpers live next to the tests; the core is imported from this checkout.
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

import patma_split  # noqa: E402
from interpreters import find_interpreter  # noqa: E402


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--python",
        action="append",
        metavar="VERSION|PATH",
        help="target interpreter, e.g. 3.9 or /usr/bin/python3.8 (repeatable; "
        "default 3.9)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list failures with tracebacks"
    )
    parser.add_argument(
        "-k", dest="select", metavar="TEXT", help="only test ids containing TEXT"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="write the split, lowered modules and results under DIR",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        metavar="N",
        help="processes that lower the modules (default: one per CPU)",
    )
    parser.add_argument(
        "--no-transpile",
        action="store_true",
        help="run the split modules unchanged (on 3.10+ this checks the split)",
    )
    return parser.parse_args(argv)


def _resolve(spec: str) -> tuple[str, str] | None:
    """(interpreter path, X.Y) for "3.9" or a path; None if not found."""
    if os.sep not in spec:
        found = find_interpreter(spec)
        return (found, spec) if found else None
    try:
        return spec, patma_split.interpreter_version(spec)
    except (OSError, subprocess.SubprocessError):
        return None


def _report(run: patma_split.SuiteRun, verbose: bool) -> None:
    failed = run.failed()
    words = {"fail": "failed", "error": "errors", "skip": "skipped"}
    extra = ", ".join(
        f"{run.count(status)} {word}"
        for status, word in words.items()
        if run.count(status)
    )
    suffix = f" ({extra})" if extra else ""
    print(f"{run.version}: {run.count('pass')}/{len(run.methods)} passed{suffix}")
    if not verbose or not failed:
        return
    for method in failed:
        print("\n" + "=" * 78)
        print(patma_split.failure_report(run, method))
    groups = collections.Counter(
        patma_split.headline(run.outcomes[m.test_id]) for m in failed
    )
    print(f"\n{run.version}: failures grouped by their error line:")
    for line, n in groups.most_common():
        print(f"  {n:4d}  {line}")


def _run_one(spec: str, args: argparse.Namespace, workdir: Path) -> bool | None:
    resolved = _resolve(spec)
    if resolved is None:
        print(f"{spec}: interpreter not found", file=sys.stderr)
        return None
    python, version = resolved
    transpile = (
        patma_split.identity_transpiler
        if args.no_transpile
        else patma_split.SpamTranspiler(version)
    )
    methods = patma_split.split_methods(patma_split.load_test_patma().text)
    only = (
        [m.test_id for m in methods if args.select in m.test_id]
        if args.select
        else None
    )
    run = patma_split.run_suite(
        python, transpile, workdir / version, only=only, jobs=args.jobs
    )
    _report(run, args.verbose)
    return not run.failed()


def _check_core(args: argparse.Namespace) -> None:
    # A broken core is reported once, with exit code 2, not as 266 failures.
    if not args.no_transpile:
        import spam_transpile  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        patma_split.load_test_patma()
    except patma_split.PatmaUnavailable as exc:
        print(f"cannot read test_patma.py: {exc}", file=sys.stderr)
        return 2
    try:
        _check_core(args)
    except ImportError:
        traceback.print_exc()
        return 2
    with tempfile.TemporaryDirectory(prefix="patma-") as tmp:
        workdir = args.keep or Path(tmp)
        results = [_run_one(spec, args, workdir) for spec in args.python or ["3.9"]]
    if None in results:
        return 2
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
