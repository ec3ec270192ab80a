"""Run CPython 3.10's own test_patma.py, lowered by spam_transpile, on older CPythons.

test_patma.py is read from the 3.10 standard library at run time (never copied
into this repository) and split into one module per test method. Every module
keeps each original line at its original line number: TestTracing compares
line numbers relative to a function's first line, and tracebacks should point
at lines a reader can find in the original file. Lines of the other test
methods and test classes become empty lines.

The split modules are transpiled in this process and then all run in one
subprocess of the target interpreter by a generated runner script, which
writes one JSON line per test. ``tests/test_conformance.py`` and
``scripts/conformance.py`` both drive :func:`run_suite`.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import zipfile
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from itertools import repeat
from typing import Callable, Iterable, Iterator

from interpreters import find_interpreter

ORACLE_VERSION = "3.10"
# A different count means the 3.10 stdlib changed under us; the split rules
# below (which classes, which exclusions) must then be reviewed.
EXPECTED_METHOD_COUNT = 266
INCLUDED_CLASSES = (
    "TestPatma",
    "TestInheritance",
    "TestTypeErrors",
    "TestValueErrors",
    "TestTracing",
)
# It only exercises the 3.10 parser via compile(); there is no match to lower.
EXCLUDED_METHODS = frozenset({"TestTracing.test_parser_deeply_nested_patterns"})

# Per-test limit inside the runner; a hang in lowered code must not stall CI.
TEST_TIMEOUT_SECONDS = 20
# Backstop for the whole subprocess (interpreter crash or a stuck alarm).
RUN_TIMEOUT_SECONDS = 300

Transpiler = Callable[[str, str], str]


class PatmaUnavailable(Exception):
    """test_patma.py cannot be read; ``interpreter_missing`` says whether to skip."""

    def __init__(self, message: str, *, interpreter_missing: bool) -> None:
        super().__init__(message)
        self.interpreter_missing = interpreter_missing


@dataclass(frozen=True)
class PatmaSource:
    path: str
    text: str


@dataclass(frozen=True)
class TestMethod:
    __test__ = False  # a record, not a pytest test class

    class_name: str
    name: str
    first_line: int  # 1-based, decorators included
    last_line: int

    @property
    def test_id(self) -> str:
        return f"{self.class_name}.{self.name}"

    @property
    def module_name(self) -> str:
        return f"patma_{self.class_name}__{self.name}"


@dataclass(frozen=True)
class Outcome:
    test_id: str
    status: str  # "pass" | "fail" | "error" | "skip"
    stage: str  # "transpile" | "import" | "run" | "crash"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("pass", "skip")


@dataclass
class SuiteRun:
    python: str
    version: str
    methods: list[TestMethod]
    outcomes: dict[str, Outcome]
    transpiled: dict[str, str]  # test id -> lowered module text (when it lowered)
    original: dict[str, str]  # test id -> split module text, before lowering

    def failed(self) -> list[TestMethod]:
        return [m for m in self.methods if not self.outcomes[m.test_id].ok]

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes.values() if o.status == status)


# --- reading and splitting test_patma.py ------------------------------------


@functools.lru_cache(maxsize=None)
def load_test_patma() -> PatmaSource:
    """The text of the 3.10 stdlib's test_patma.py, located by asking 3.10 itself."""
    python = find_interpreter(ORACLE_VERSION)
    if python is None:
        raise PatmaUnavailable(
            f"CPython {ORACLE_VERSION} not found", interpreter_missing=True
        )
    proc = subprocess.run(
        [python, "-c", "import test.test_patma as t; print(t.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        # Some distributions strip the `test` package; that is not a skip.
        raise PatmaUnavailable(
            f"{python} cannot import test.test_patma:\n{proc.stderr}",
            interpreter_missing=False,
        )
    path = proc.stdout.strip()
    with open(path, encoding="utf-8") as file:
        return PatmaSource(path=path, text=file.read())


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno] + [d.lineno for d in decorators])
    assert node.end_lineno is not None
    return first, node.end_lineno


def _test_name(node: ast.stmt) -> str | None:
    """The name of a test method (unittest's `test` prefix), else None."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name if node.name.startswith("test") else None
    return None


def _test_classes(tree: ast.Module) -> list[ast.ClassDef]:
    return [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and any(map(_test_name, node.body))
    ]


def _is_main_guard(node: ast.stmt) -> bool:
    # `if __name__ == "__main__":` imports pyperf, absent on the targets.
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _methods_in(tree: ast.Module) -> list[TestMethod]:
    methods = []
    for cls in _test_classes(tree):
        if cls.name not in INCLUDED_CLASSES:
            continue
        for node in cls.body:
            name = _test_name(node)
            method = name and TestMethod(cls.name, name, *_span(node))
            if method and method.test_id not in EXCLUDED_METHODS:
                methods.append(method)
    return methods


def split_methods(text: str) -> list[TestMethod]:
    """The test methods to run, in source order."""
    return _methods_in(ast.parse(text))


def _blank_spans(tree: ast.Module, keep: TestMethod) -> Iterator[tuple[int, int]]:
    yield from (_span(node) for node in tree.body if _is_main_guard(node))
    for cls in _test_classes(tree):
        if cls.name != keep.class_name:
            yield _span(cls)
            continue
        # Helpers that are not tests (staticmethods such as `_trace`) stay.
        for node in cls.body:
            name = _test_name(node)
            if name and name != keep.name:
                yield _span(node)


class Splitter:
    """Builds the per-method modules of one test_patma.py text (parsed once)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.tree = ast.parse(text)
        self.methods = _methods_in(self.tree)

    def module_source(self, method: TestMethod) -> str:
        lines = list(self.lines)
        for first, last in _blank_spans(self.tree, method):
            lines[first - 1 : last] = [""] * (last - first + 1)
        # Trailing empty lines change no line number but cost the transpiler
        # time in proportion (thousands of them for the early TestPatma tests).
        return "\n".join(lines).rstrip("\n") + "\n"


# --- transpiling and running --------------------------------------------------


def interpreter_version(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return out.strip()


@dataclass(frozen=True)
class SpamTranspiler:
    """spam_transpile.transpile for one target. A class, not a closure, so that
    worker processes can receive it; the core is imported on first use so that
    collection works while it is broken."""

    target: str

    def __call__(self, source: str, filename: str) -> str:
        import spam_transpile

        return spam_transpile.transpile(source, target=self.target, filename=filename)


def identity_transpiler(source: str, filename: str) -> str:
    """Runs the split modules unchanged: on 3.10+ this checks the splitting."""
    return source


def _describe_transpile_error(exc: Exception) -> str:
    core = sys.modules.get("spam_transpile")
    if core is not None and isinstance(exc, core.TranspileError):
        return f"TranspileError: {exc}"
    # Anything else is a crash of the core; its traceback is what helps.
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _lower_one(transpile: Transpiler, source: str, filename: str) -> tuple[str, str]:
    """(lowered text, "") or ("", error text). Errors travel as text because
    TranspileError does not survive pickling between processes."""
    try:
        return transpile(source, filename), ""
    except Exception as exc:  # a crash in one module must not hide the others
        return "", _describe_transpile_error(exc)


def _lower_all(
    transpile: Transpiler, sources: list[str], filenames: list[str], jobs: int
) -> list[tuple[str, str]]:
    # Lowering dominates the run time (the interpreter run takes about a
    # second), so it is spread over processes when there is enough of it.
    if jobs <= 1 or len(sources) < 2 * jobs:
        return list(map(_lower_one, repeat(transpile), sources, filenames))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunk = max(1, len(sources) // (4 * jobs))
        return list(
            pool.map(_lower_one, repeat(transpile), sources, filenames, chunksize=chunk)
        )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run_suite(
    python: str,
    transpile: Transpiler,
    workdir: Path,
    *,
    only: Iterable[str] | None = None,
    jobs: int | None = None,
) -> SuiteRun:
    """Split, lower and run test_patma on ``python``; one outcome per method.

    ``jobs`` processes lower the modules (default: one per CPU); ``only``
    limits the run to these test ids.
    """
    splitter = Splitter(load_test_patma().text)
    wanted = set(only) if only is not None else None
    methods = [m for m in splitter.methods if wanted is None or m.test_id in wanted]
    run = SuiteRun(python, interpreter_version(python), methods, {}, {}, {})
    filenames = []
    for method in methods:
        run.original[method.test_id] = splitter.module_source(method)
        path = workdir / "original" / f"{method.module_name}.py"
        _write(path, run.original[method.test_id])
        filenames.append(str(path))
    sources = [run.original[m.test_id] for m in methods]
    lowered = _lower_all(transpile, sources, filenames, jobs or os.cpu_count() or 1)
    plan = []
    for method, (text, error) in zip(methods, lowered):
        if error:
            outcome = Outcome(method.test_id, "fail", "transpile", error)
            run.outcomes[method.test_id] = outcome
        else:
            run.transpiled[method.test_id] = text
            plan.append(_plan_entry(method, text, workdir))
    if run.version == "3.6":
        _provide_dataclasses_backport(workdir)
    run.outcomes.update(_execute(python, plan, workdir))
    return run


def _provide_dataclasses_backport(workdir: Path) -> None:
    """test_patma needs ``dataclasses`` (3.7+): on 3.6, put PyPI's backport
    beside the runner, which imports from its own folder."""
    download = workdir / "backport"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--python-version",
            "3.6",
            "--only-binary=:all:",
            "dataclasses==0.8",
            "-d",
            str(download),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = download.glob("dataclasses-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (workdir / "dataclasses.py").write_bytes(archive.read("dataclasses.py"))


def _plan_entry(method: TestMethod, lowered: str, workdir: Path) -> dict[str, str]:
    path = workdir / "lowered" / f"{method.module_name}.py"
    _write(path, lowered)
    return {
        "id": method.test_id,
        "module": method.module_name,
        "path": str(path),
        "class": method.class_name,
        "method": method.name,
    }


def _execute(
    python: str, plan: list[dict[str, str]], workdir: Path
) -> dict[str, Outcome]:
    """Run the plan in one subprocess; restart after the test that killed it."""
    runner, plan_path, results_path = (
        workdir / "runner.py",
        workdir / "plan.json",
        workdir / "results.jsonl",
    )
    _write(runner, RUNNER_SOURCE)
    _write(plan_path, json.dumps(plan))
    results_path.unlink(missing_ok=True)
    while True:
        crash = _run_runner(python, runner, plan_path, results_path)
        outcomes = _read_results(results_path)
        if len(outcomes) >= len(plan):
            break
        if not _record_crash(results_path, outcomes, crash):
            break
    for entry in plan:  # only reached when the runner could not even start
        outcomes.setdefault(
            entry["id"], Outcome(entry["id"], "error", "crash", crash or "no result")
        )
    return outcomes


def _run_runner(python: str, runner: Path, plan: Path, results: Path) -> str:
    """Start the runner; returns a description of how it died, "" if it did not."""
    command = [python, str(runner), str(plan), str(results), str(TEST_TIMEOUT_SECONDS)]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8")
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_SECONDS,
            cwd=runner.parent,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return f"the runner was killed after {RUN_TIMEOUT_SECONDS}s"
    if proc.returncode != 0:
        return f"the runner exited with {proc.returncode}:\n{proc.stderr[-4000:]}"
    return ""


def _records(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _read_results(path: Path) -> dict[str, Outcome]:
    return {
        record["id"]: Outcome(
            record["id"], record["status"], record["stage"], record["detail"]
        )
        for record in _records(path)
        if record["event"] == "result"
    }


def _record_crash(results: Path, done: dict[str, Outcome], crash: str) -> bool:
    """Blame the test that was running when the interpreter died, so the next
    runner skips it. False when no test can be blamed (no progress possible)."""
    started = [r["id"] for r in _records(results) if r["event"] == "start"]
    culprit = next((i for i in reversed(started) if i not in done), None)
    if culprit is None:
        return False
    record = {
        "event": "result",
        "id": culprit,
        "status": "error",
        "stage": "crash",
        "detail": crash or "the runner stopped without a result",
    }
    with results.open("a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")
    return True


# --- reporting ------------------------------------------------------------------


def method_lines(source: str, method_name: str) -> range:
    """1-based line numbers of a method, found by its `def` line since the
    lowering may move it; trailing empty lines (blanked methods) left out."""
    lines = source.split("\n")
    starts = [
        n
        for n, line in enumerate(lines, 1)
        if line.lstrip().startswith(f"def {method_name}(")
    ]
    if not starts:
        return range(0)
    start = last = starts[0]
    indent = _indent(lines[start - 1])
    for n in range(start + 1, len(lines) + 1):
        if lines[n - 1].strip():
            if _indent(lines[n - 1]) <= indent:
                break
            last = n
    return range(start, last + 1)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _numbered(source: str, numbers: Iterable[int], mark: int = 0) -> str:
    lines = source.split("\n")
    return "\n".join(
        f"{n:5d}{'>' if n == mark else ' '}| {lines[n - 1]}" for n in numbers
    )


def _frame_lines(detail: str, module_name: str) -> list[int]:
    """Line numbers of traceback frames in the test's module."""
    pattern = re.compile(
        r'File ".*[/\\]' + re.escape(module_name) + r'\.py", line (\d+)'
    )
    return sorted({int(found) for found in pattern.findall(detail)})


def failure_report(run: SuiteRun, method: TestMethod, limit: int = 200) -> str:
    """The lowered method, lines the traceback points at outside it (e.g. in
    TestInheritance.check_sequence_then_mapping), and the traceback."""
    outcome = run.outcomes[method.test_id]
    lowered = method.test_id in run.transpiled
    source = run.transpiled[method.test_id] if lowered else run.original[method.test_id]
    label = "lowered" if lowered else "original (not lowered)"
    span = method_lines(source, method.name)
    parts = [
        f"{method.test_id} on CPython {run.version} ({run.python}): "
        f"{outcome.status} at {outcome.stage}",
        f"--- {label} source of {method.name} ---",
        _numbered(source, span[:limit]) or "(method not found)",
    ]
    for lineno in _frame_lines(outcome.detail, method.module_name):
        if lowered and lineno not in span:
            around = range(
                max(1, lineno - 3), min(len(source.split("\n")), lineno + 3) + 1
            )
            parts += [
                f"--- {label} source near line {lineno} ---",
                _numbered(source, around, lineno),
            ]
    parts += ["--- details ---", outcome.detail.rstrip()]
    return "\n".join(parts)


def headline(outcome: Outcome) -> str:
    """The exception line of a traceback: what groups similar failures."""
    lines = [line for line in outcome.detail.splitlines() if line.strip()]
    if not lines:
        return "(no detail)"
    if lines[0].startswith("TranspileError: "):
        # Drop the per-module `path:line:col: ` so equal errors group together.
        return re.sub(r"^TranspileError: .*?:\d+:\d+: ", "TranspileError: ", lines[0])
    return lines[-1].strip()


# The runner runs on the target interpreter (3.6+), so it avoids newer syntax.
RUNNER_SOURCE = r'''
"""Generated by tests/patma_split.py: runs one-test modules, writes JSON lines."""
# 3.10's `collections` package imports collections.abc itself and test_patma
# relies on that (`import collections` then `collections.abc.Sequence`); 3.9's
# does not. This is an environment difference, not part of lowering `match`.
import collections.abc
import importlib.util
import json
import signal
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
import unittest


class TestTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise TestTimeout("test exceeded its time limit")


def load(entry):
    spec = importlib.util.spec_from_file_location(entry["module"], entry["path"])
    module = importlib.util.module_from_spec(spec)
    sys.modules[entry["module"]] = module
    spec.loader.exec_module(module)
    return module


def classify(result):
    if result.errors:
        return "error", "\n".join(text for _, text in result.errors)
    if result.failures:
        return "fail", "\n".join(text for _, text in result.failures)
    if result.unexpectedSuccesses:
        return "fail", "unexpected success"
    if result.skipped:
        return "skip", "\n".join(reason for _, reason in result.skipped)
    if result.testsRun != 1:
        return "error", "the test did not run"
    return "pass", ""


def run_one(entry, timeout):
    try:
        module = load(entry)
        case = getattr(module, entry["class"])(entry["method"])
    except (Exception, SystemExit):
        return "error", "import", traceback.format_exc()
    result = unittest.TestResult()
    signal.alarm(timeout)
    try:
        # A suite, not case.run(), so class-level fixtures behave as usual.
        unittest.TestSuite([case]).run(result)
    finally:
        signal.alarm(0)
    status, detail = classify(result)
    return status, "run", detail


def main():
    plan_path, results_path, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(plan_path, encoding="utf-8") as file:
        plan = json.load(file)
    done = set()
    try:
        with open(results_path, encoding="utf-8") as file:
            for line in file:
                record = json.loads(line)
                if record["event"] == "result":
                    done.add(record["id"])
    except FileNotFoundError:
        pass
    signal.signal(signal.SIGALRM, on_alarm)
    with open(results_path, "a", encoding="utf-8") as out:
        for entry in plan:
            if entry["id"] in done:
                continue
            # Written first so that a crash can be blamed on this test.
            out.write(json.dumps({"event": "start", "id": entry["id"]}) + "\n")
            out.flush()
            status, stage, detail = run_one(entry, timeout)
            record = {"event": "result", "id": entry["id"], "status": status,
                      "stage": stage, "detail": detail}
            out.write(json.dumps(record) + "\n")
            out.flush()


main()
'''
