"""Mutation fuzzing: damage real files with match statements, transpile the mutants.

Seeds are real code: CPython's own test_patma.py (read from the installed 3.10
interpreter), fixtures/cases/*.py, and the standard library files that hold
match statements. Each mutant is a slice of a seed with a few random edits
(lines deleted, duplicated, swapped or re-indented, characters inserted or
deleted, keywords dropped in, line endings changed, backslash-only lines and
form feeds, patterns wrapped deeply, truncation).

Every mutant must either transpile to code that compiles (on this
interpreter, and on the real target for a sample) or be refused with a
positioned TranspileError; never an internal error, never an exception of
another type, never longer than the time limit per file.

    python scripts/mutation_fuzz.py --count 2000 --seed 1 [--jobs 2] [--time-limit 20]

prints the counts per outcome and each problem; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
for _path in (str(ROOT), str(ROOT / "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from spam_transpile import TranspileError, transpile  # noqa: E402

TARGETS = ("3.6", "3.7", "3.8", "3.9")
TIME_LIMIT = 20.0  # seconds per mutant
_LINE_END = re.compile(r"\r\n|\r|\n")
_FORMAT = re.compile(r"^.*:\d+:\d+: error: .+", re.DOTALL)


# -- seeds -----------------------------------------------------------------------


def seed_files() -> List[Tuple[str, str]]:
    """(name, text) of every seed that can be found here."""
    from interpreters import find_interpreter

    seeds: List[Tuple[str, str]] = []
    for path in sorted((ROOT / "fixtures" / "cases").glob("*.py")):
        if not path.name.endswith(".out.py"):
            seeds.append((path.name, path.read_text(encoding="utf-8")))
    for version in ("3.10", "3.11", "3.12", "3.13"):
        python = find_interpreter(version)
        if python is not None:
            seeds.extend(_interpreter_seeds(python, version))
    return seeds


_FIND_SEEDS = r"""
import ast, json, os, re, sys, sysconfig, warnings
warnings.simplefilter("ignore")
MAY = re.compile(r"^[ \t]*match\b.*:[ \t]*(#.*)?$", re.M)
want_patma = sys.argv[1] == "1"
root = sysconfig.get_paths()["stdlib"]
found = []
for folder, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d not in ("site-packages", "__pycache__")]
    for name in files:
        path = os.path.join(folder, name)
        if not name.endswith(".py"):
            continue
        is_patma = name == "test_patma.py"
        if is_patma and not want_patma:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if is_patma or (MAY.search(text) and any(
                isinstance(n, ast.Match) for n in ast.walk(ast.parse(text)))):
                found.append([os.path.relpath(path, root), text])
        except Exception:
            pass
print(json.dumps(found))
"""


def _interpreter_seeds(python: str, version: str) -> List[Tuple[str, str]]:
    # test_patma.py from 3.10 only: later copies are near duplicates.
    want_patma = "1" if version == "3.10" else "0"
    out = subprocess.run(
        [python, "-c", _FIND_SEEDS, want_patma],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode != 0:
        return []
    return [(f"{version}/{name}", text) for name, text in json.loads(out.stdout)]


# -- mutations ---------------------------------------------------------------------

Lines = List[str]
_INSERTS = list("()[]{}:,|*.=#'\"\\ \t\f") + ["\n", "\r", "**", "->", ":="]
_WORDS = ["match", "case", "_", "as", "if", "*", "**", "|", "None", "await", "yield"]
_WORDS += ["return", "break", "nonlocal x", "global x", "lambda:", "async", "*_"]


def _slice(text: str, rng: random.Random) -> Lines:
    """A whole statement (a def, a class, a loop...) of at most 120 lines
    taken out of its block and dedented, most often one holding a match
    statement: mutants start close to valid code with something to lower."""
    lines = _LINE_END.split(text)
    with_match, others = _units(text)
    units = with_match if with_match and rng.random() < 0.9 else others
    if not units:
        first = rng.randrange(len(lines))
        return lines[first : first + rng.randint(5, 60)]
    first, last, indent = rng.choice(units)
    return [_dedent(line, indent) for line in lines[first:last]]


def _units(text: str) -> Tuple[List[Tuple[int, int, int]], List[Tuple[int, int, int]]]:
    """(first line, end line, indentation) of each statement of 120 lines or
    less: those holding a match statement, and the others."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [], []
    with_match: List[Tuple[int, int, int]] = []
    others: List[Tuple[int, int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        if node.col_offset and not isinstance(node, _DEFINITIONS):
            continue  # a ``return`` taken out of its function means nothing
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno] + [d.lineno for d in decorators]) - 1
        if node.end_lineno - first > 120:
            continue
        holds = any(isinstance(inner, ast.Match) for inner in ast.walk(node))
        unit = (first, node.end_lineno, node.col_offset)
        (with_match if holds else others).append(unit)
    return with_match, others


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _dedent(line: str, indent: int) -> str:
    prefix = len(line) - len(line.lstrip(" \t"))
    return line[min(prefix, indent) :]


def _delete_line(lines: Lines, rng: random.Random) -> None:
    if lines:
        del lines[rng.randrange(len(lines))]


def _duplicate_line(lines: Lines, rng: random.Random) -> None:
    if lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])


def _swap_lines(lines: Lines, rng: random.Random) -> None:
    if len(lines) > 1:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]


def _reindent(lines: Lines, rng: random.Random) -> None:
    if lines:
        i = rng.randrange(len(lines))
        body = lines[i].lstrip(" \t")
        lines[i] = rng.choice(["", " ", "    ", "\t", "        ", "\f    "]) + body


def _insert_char(lines: Lines, rng: random.Random) -> None:
    if lines:
        i = rng.randrange(len(lines))
        j = rng.randint(0, len(lines[i]))
        lines[i] = lines[i][:j] + rng.choice(_INSERTS) + lines[i][j:]


def _delete_char(lines: Lines, rng: random.Random) -> None:
    candidates = [i for i, line in enumerate(lines) if line]
    if candidates:
        i = rng.choice(candidates)
        j = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:j] + lines[i][j + 1 :]


def _insert_word(lines: Lines, rng: random.Random) -> None:
    if lines:
        i = rng.randrange(len(lines))
        words = lines[i].split(" ")
        j = rng.randint(0, len(words))
        words.insert(j, rng.choice(_WORDS))
        lines[i] = " ".join(words)


def _layout_line(lines: Lines, rng: random.Random) -> None:
    i = rng.randint(0, len(lines))
    indent = re.match(r"[ \t]*", lines[i] if i < len(lines) else "").group()
    extra = rng.choice(["\\", "", "   ", "# c", "\f", "\f" + indent + "# ff"])
    lines.insert(i, extra if extra.startswith("\f") else indent + extra)


def _nest_pattern(lines: Lines, rng: random.Random) -> None:
    cases = [i for i, line in enumerate(lines) if line.lstrip().startswith("case ")]
    if cases:
        i = rng.choice(cases)
        head, _, rest = lines[i].partition("case ")
        pattern, colon, tail = rest.rpartition(":")
        if colon:
            depth = rng.choice([2, 5, 9, 17, 40])
            wrap = rng.choice(["({})", "[{}]", "({},)", "{{'k': {}}}", "C({})"])
            for _ in range(depth):
                pattern = wrap.format(pattern)
            lines[i] = head + "case " + pattern + ":" + tail


def _truncate(lines: Lines, rng: random.Random) -> None:
    if lines:
        i = rng.randrange(len(lines))
        lines[i] = lines[i][: rng.randint(0, len(lines[i]))]
        del lines[i + 1 :]


MUTATIONS: Sequence[Callable[[Lines, random.Random], None]] = (
    _delete_line,
    _duplicate_line,
    _swap_lines,
    _reindent,
    _insert_char,
    _delete_char,
    _insert_word,
    _layout_line,
    _layout_line,
    _nest_pattern,
    _truncate,
)


def mutant(text: str, rng: random.Random) -> str:
    lines = _slice(text, rng)
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        rng.choice(MUTATIONS)(lines, rng)
    endings = rng.choice(["\n", "\r\n", "\r", "mixed"])
    pieces = []
    for line in lines:
        ending = rng.choice(["\n", "\r\n", "\r"]) if endings == "mixed" else endings
        pieces.append(line + ending)
    return "".join(pieces)


# -- checking one mutant -----------------------------------------------------------


@dataclass
class Result:
    outcome: str  # lowered, unchanged, refused, or a problem kind
    seconds: float
    detail: str = ""
    output: Optional[str] = None
    target: str = "3.9"


class _TimeLimit(BaseException):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _TimeLimit()


def check_mutant(source: str, target: str, time_limit: float = TIME_LIMIT) -> Result:
    start = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    try:
        output = transpile(source, target=target, filename="mutant.py")
    except TranspileError as error:
        return _refused(error, time.perf_counter() - start)
    except _TimeLimit:
        return Result("problem: time limit", time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - any other exception is a finding
        detail = f"{type(exc).__name__}: {exc}"
        return Result("problem: exception", time.perf_counter() - start, detail)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    if seconds > time_limit:  # the alarm cannot interrupt native code
        return Result("problem: time limit", seconds)
    if output == source:
        return Result("unchanged", seconds)
    problem = _output_problem(source, output)
    if problem:
        return Result("problem: " + problem, seconds)
    return Result("lowered", seconds, output=output, target=target)


def _refused(error: TranspileError, seconds: float) -> Result:
    text = error.format()
    if "internal error" in error.msg:
        return Result("problem: internal error", seconds, text)
    positioned = (error.lineno or 0) >= 1 and (error.offset or 0) >= 1
    if not positioned or not _FORMAT.match(text):
        return Result("problem: unpositioned error", seconds, text)
    return Result("refused", seconds, text)


def _output_problem(source: str, output: str) -> str:
    if len(_LINE_END.findall(source)) != len(_LINE_END.findall(output)):
        return "line count changed"
    try:
        compile(output, "mutant.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"output does not compile: {exc.msg} at {exc.lineno}:{exc.offset}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"output does not compile: {type(exc).__name__}"
    return ""


# -- many mutants ------------------------------------------------------------------


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)
    problems: List[str] = field(default_factory=list)
    slowest: float = 0.0
    target_checked: int = 0


def _job(args: Tuple[str, str, int, float]) -> Tuple[str, Result]:
    name, text, seed, time_limit = args
    rng = random.Random(seed)
    source = mutant(text, rng)
    result = check_mutant(source, rng.choice(TARGETS), time_limit)
    if result.outcome.startswith("problem"):
        result.detail = (
            f"{result.detail}\n--- mutant of {name} (seed {seed}) ---\n{source!r}"
        )
    return name, result


def run(
    count: int,
    seed: int,
    jobs: int = 1,
    time_limit: float = TIME_LIMIT,
    target_sample: int = 20,
    seeds: Optional[List[Tuple[str, str]]] = None,
    progress: int = 0,
) -> Report:
    seeds = seeds if seeds is not None else seed_files()
    chooser = random.Random(seed)
    work = []
    for number in range(count):
        name, text = chooser.choice(seeds)
        work.append((name, text, seed * 1_000_003 + number, time_limit))
    report = Report()
    lowered: List[Result] = []
    for done, (name, result) in enumerate(_map(work, jobs), 1):
        if progress and done % progress == 0:
            print(
                f"  {done} mutants: {dict(sorted(report.counts.items()))}", flush=True
            )
        report.counts[result.outcome] += 1
        report.slowest = max(report.slowest, result.seconds)
        if result.outcome.startswith("problem"):
            report.problems.append(f"{result.outcome}: {result.detail}")
        elif result.outcome == "lowered":
            lowered.append(result)
    sample = random.Random(seed).sample(lowered, min(target_sample, len(lowered)))
    report.problems += compile_on_targets(sample)
    report.target_checked = len(sample)
    return report


def _map(work: list, jobs: int) -> Iterator[Tuple[str, Result]]:
    if jobs <= 1:
        yield from map(_job, work)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_job, work, chunksize=4)


_COMPILE_MANY = """
import json, sys, warnings
warnings.simplefilter("ignore")
bad = []
for i, text in enumerate(json.load(sys.stdin)):
    try:
        compile(text, "mutant.py", "exec", dont_inherit=True)
    except Exception as e:
        bad.append([i, "%s: %s" % (type(e).__name__, e)])
print(json.dumps(bad))
"""


def compile_on_targets(sample: List[Result]) -> List[str]:
    """Compile each sampled output on the real interpreter of its target."""
    from interpreters import find_interpreter

    problems: List[str] = []
    by_target: Dict[str, List[Result]] = {}
    for result in sample:
        by_target.setdefault(result.target, []).append(result)
    for target, results in sorted(by_target.items()):
        python = find_interpreter(target)
        if python is None:
            continue
        done = subprocess.run(
            [python, "-c", _COMPILE_MANY],
            input=json.dumps([r.output for r in results]),
            capture_output=True,
            text=True,
            timeout=300,
        )
        for i, error in json.loads(done.stdout or "[]"):
            problems.append(
                f"problem: output does not compile on {target}: {error}\n"
                f"{results[i].output!r}"
            )
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--target-sample", type=int, default=100)
    args = parser.parse_args(argv)
    seeds = seed_files()
    start = time.perf_counter()
    report = run(
        args.count,
        args.seed,
        args.jobs,
        args.time_limit,
        args.target_sample,
        seeds,
        progress=200,
    )
    print(
        f"{args.count} mutants of {len(seeds)} seeds in "
        f"{time.perf_counter() - start:.1f} s (slowest {report.slowest:.2f} s; "
        f"{report.target_checked} outputs compiled on their target interpreter)"
    )
    for outcome, number in sorted(report.counts.items()):
        print(f"  {outcome}: {number}")
    for problem in report.problems:
        print(problem[:4000])
    return 1 if report.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
