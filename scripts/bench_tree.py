"""Benchmark the command line on whole trees, beside libcst and a plain copy.

Two trees, each measured in one run of this script:

* ``stdlib``: a copy of a CPython standard library (``lib/python3.X`` without
  ``site-packages``): many files, few match statements;
* ``match-heavy``: generated files made of functions with match statements.

For each tree, with the median of ``--repeat`` runs (time.perf_counter):

* ``copy``: ``shutil.copytree`` of the tree (the floor for -o OUT);
* ``libcst``: read, ``libcst.parse_module``, ``.code``, write, for every
  ``.py`` file, in one process (a bare parse-and-print round trip);
* ``spam -jN``: ``python -m spam_transpile TREE -o OUT`` with an empty cache
  (a subprocess, interpreter start-up included), with one worker and with
  all cores;
* ``cached``: the same command again with the warm cache into a new OUT
  (content cache only: every file is read, hashed and written), and into
  the OUT of the previous run (an unchanged tree: the stat cache settles
  every file without opening it), and once more into that OUT with the stat
  cache deleted (what a rerun costs without it).

Lines per second count the ``.py`` lines of the tree. Run from a checkout::

    python scripts/bench_tree.py                 # both trees
    python scripts/bench_tree.py --stdlib /usr/lib/python3.11 --repeat 5

Nothing here asserts: targets (stdlib at least 10x the libcst round trip,
a cached rerun at least 20x faster than the first run) are printed as
ratios for a person to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------
# Trees
# --------------------------------------------------------------------------


def default_stdlib() -> Path:
    """The 3.11.7 standard library under pyenv if present, else this interpreter's."""
    root = os.environ.get("PYENV_ROOT") or _pyenv_root()
    if root:
        candidate = Path(root) / "versions" / "3.11.7" / "lib" / "python3.11"
        if candidate.is_dir():
            return candidate
    return Path(sysconfig.get_paths()["stdlib"])


def _pyenv_root() -> Optional[str]:
    try:
        return subprocess.run(
            ["pyenv", "root"], capture_output=True, text=True, timeout=20
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def copy_stdlib(source: Path, destination: Path) -> Path:
    ignore = shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc")
    shutil.copytree(source, destination, ignore=ignore, symlinks=True)
    return destination


MATCH_FUNCTION = '''
def handle_{n}(event, state):
    """Dispatch event {n}."""
    match event:
        case {{"type": "click", "pos": (x, y)}} if x >= 0:
            state.append(("click", x, y))
        case {{"type": "key", "key": str(key)}}:
            state.append(("key", key))
        case Point(x=0, y=y) | Point(x=y, y=0):
            state.append(("axis", y))
        case [first, *rest] if rest:
            state.append(("many", first, len(rest)))
        case [single]:
            state.append(("one", single))
        case "quit" | "exit":
            return False
        case int(n) if n > {n}:
            state.append(("big", n))
        case _:
            state.append(("unknown", event))
    return True
'''

HEADER = '''"""Generated for the benchmark: {count} functions with match statements."""

from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int
'''


def make_match_heavy(destination: Path, files: int, functions: int) -> Path:
    for index in range(files):
        package = destination / f"pkg{index % 10}"
        package.mkdir(parents=True, exist_ok=True)
        body = "".join(MATCH_FUNCTION.format(n=n) for n in range(functions))
        (package / f"module{index}.py").write_text(
            HEADER.format(count=functions) + body, encoding="utf-8"
        )
    return destination


def python_lines(tree: Path) -> Tuple[int, int]:
    files = lines = 0
    for path in tree.rglob("*.py"):
        files += 1
        lines += path.read_bytes().count(b"\n")
    return files, lines


# --------------------------------------------------------------------------
# Contenders
# --------------------------------------------------------------------------


def plain_copy(tree: Path, out: Path) -> None:
    shutil.copytree(tree, out, symlinks=True)


def libcst_round_trip(tree: Path, out: Path) -> int:
    """Parse and print every .py file; returns how many libcst could not parse."""
    import libcst

    failures = 0
    for path in tree.rglob("*.py"):
        target = out / path.relative_to(tree)
        target.parent.mkdir(parents=True, exist_ok=True)
        raw = path.read_bytes()
        try:
            module = libcst.parse_module(raw)
            target.write_bytes(module.bytes)
        except Exception:  # syntax-error test data in the stdlib
            failures += 1
    return failures


def spam(tree: Path, out: Path, cache: Path, jobs: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, SPAM_TRANSPILE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "spam_transpile",
            str(tree),
            "-o",
            str(out),
            "-j",
            str(jobs),
        ],
        capture_output=True,
        text=True,
        env=env,
    )


def timed(action: Callable[[], object]) -> Tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


#: the stat cache leaves out files changed less than this before a run
#: (spam_transpile.files.statcache.RACY_MARGIN_NS), so trees must be older
SETTLE_SECONDS = 2.5


def settle(tree: Path) -> None:
    """Wait until every file of ``tree`` is old enough for the stat cache."""
    newest = max(
        max(path.stat().st_mtime, path.stat().st_ctime)
        for path in tree.rglob("*")
        if path.is_file()
    )
    wait = newest + SETTLE_SECONDS - time.time()
    if wait > 0:
        time.sleep(wait)


def forget_stats(cache: Path) -> None:
    """Delete the stat cache, keeping the content cache."""
    for path in cache.rglob("stat-*.json"):
        path.unlink()


# --------------------------------------------------------------------------
# Measuring one tree
# --------------------------------------------------------------------------


def measure(tree: Path, work: Path, repeat: int, jobs: int) -> Dict[str, float]:
    times: Dict[str, List[float]] = {}
    notes: Dict[str, str] = {}

    def record(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)

    settle(tree)
    for run in range(repeat):
        base = work / f"run{run}"
        record("copy", timed(lambda: plain_copy(tree, base / "copy"))[0])
        seconds, failures = timed(lambda: libcst_round_trip(tree, base / "libcst"))
        record("libcst", seconds)
        notes["libcst"] = f"{failures} files libcst cannot parse"
        for workers in sorted({1, jobs}):
            cache = base / f"cache{workers}"
            first_out = base / f"spam{workers}"
            seconds, proc = timed(lambda: spam(tree, first_out, cache, workers))
            record(f"spam -j{workers}", seconds)
            notes[f"spam -j{workers}"] = _summary(proc)
            seconds, proc = timed(
                lambda: spam(tree, base / f"again{workers}", cache, workers)
            )
            record(f"cached -j{workers}, new OUT", seconds)
            seconds, proc = timed(lambda: spam(tree, first_out, cache, workers))
            record(f"cached -j{workers}, same OUT", seconds)
            notes[f"cached -j{workers}, same OUT"] = _summary(proc)
            forget_stats(cache)
            seconds, proc = timed(lambda: spam(tree, first_out, cache, workers))
            record(f"cached -j{workers}, same OUT, no stats", seconds)
        shutil.rmtree(base)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, note in notes.items():
        print(f"    note: {name}: {note}")
    return medians


def _summary(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    errors = sum(1 for line in lines if ": error: " in line)
    last = lines[-1] if lines else "(no summary)"
    return f"exit {proc.returncode}, {errors} error lines; {last}"


def report(title: str, tree: Path, medians: Dict[str, float], jobs: int) -> None:
    files, lines = python_lines(tree)
    print(f"\n{title}: {files} .py files, {lines} lines")
    print(f"  {'contender':32} {'median s':>10} {'lines/s':>12} {'vs libcst':>10}")
    libcst = medians["libcst"]
    for name, seconds in medians.items():
        speed = lines / seconds if seconds else float("inf")
        print(f"  {name:32} {seconds:10.3f} {speed:12,.0f} {libcst / seconds:9.1f}x")
    for workers in sorted({1, jobs}):
        first = medians[f"spam -j{workers}"]
        new_out = medians[f"cached -j{workers}, new OUT"]
        same_out = medians[f"cached -j{workers}, same OUT"]
        no_stats = medians[f"cached -j{workers}, same OUT, no stats"]
        print(
            f"  -j{workers}: first run is {libcst / first:.1f}x the libcst round trip; "
            f"cached rerun {first / same_out:.1f}x faster (same OUT; target 20x), "
            f"{first / no_stats:.1f}x without the stat cache, "
            f"{first / new_out:.1f}x (new OUT)"
        )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--stdlib", type=Path, default=None, help="standard library folder"
    )
    parser.add_argument("--match-files", type=int, default=200)
    parser.add_argument(
        "--functions", type=int, default=8, help="match functions per file"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", choices=["stdlib", "match-heavy"], default=None)
    args = parser.parse_args(argv)
    stdlib = args.stdlib or default_stdlib()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, repeat {args.repeat}"
    )
    with tempfile.TemporaryDirectory(prefix="spam-bench-") as scratch:
        work = Path(scratch)
        if args.only in (None, "stdlib"):
            tree = copy_stdlib(stdlib, work / "trees" / "stdlib")
            print(f"stdlib copied from {stdlib}")
            report(
                "stdlib",
                tree,
                measure(tree, work / "stdlib", args.repeat, args.jobs),
                args.jobs,
            )
        if args.only in (None, "match-heavy"):
            tree = make_match_heavy(
                work / "trees" / "heavy", args.match_files, args.functions
            )
            medians = measure(tree, work / "heavy", args.repeat, args.jobs)
            report("match-heavy", tree, medians, args.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
