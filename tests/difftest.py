"""Differential testing: run a Python 3.10 program natively and transpiled, compare.

A :class:`Program` is the text of a whole module written for CPython 3.10. It is
run (a) natively on CPython 3.10 (the oracle, plus 3.12 when installed) and (b)
after ``spam_transpile.transpile(src, target=X)`` on CPython X (3.9, 3.8). What is
compared is everything a user could observe: the text the program printed, the
type and message of an exception that escaped it, the (function, line) frames of
that exception's traceback inside the program, and optionally the
``sys.settrace`` call/line events of the program's own frames.

Many programs run in one interpreter process (one subprocess per batch and
interpreter), each in a fresh module namespace with its stdout captured, so a
few hundred programs cost well under a second per interpreter.

Programs can ``import dt``: a small helper module (see ``HELPERS``) with
instrumented objects that print every protocol call made on them, so call order
and call counts become part of the printed output.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent

# CPython 3.10 is the oracle the transpiler promises to reproduce; 3.12 is run
# too (when present) because a test whose result depends on the CPython version
# needs to be known as such.
ORACLE_VERSION = "3.10"
EXTRA_ORACLE_VERSIONS = ("3.12",)
TARGET_VERSIONS = ("3.9", "3.8")

# Per program, in seconds: a lowering that lets a `break` hit a loop of its own
# turns `while True: match ...` into an endless loop; that must fail one
# program, not hang the suite.
PROGRAM_TIMEOUT = 5.0
BATCH_TIMEOUT = 300.0

_MARK = "@@difftest-result@@ "

# The helper module programs import as `dt`. It runs on every interpreter the
# runner runs on (3.6+), so: no match statements, no walrus, no 3.10 APIs.
HELPERS = r'''
import re
from collections.abc import Mapping, Sequence


def show(value):
    """repr() without memory addresses, which differ between runs."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", repr(value))


def ev(label, value):
    """Return value, printing that `label` was evaluated (counts evaluations)."""
    print("eval", label)
    return value


def names(namespace):
    """The user-visible names of locals()/globals()/vars(cls), sorted."""
    return sorted(k for k in namespace if not k.startswith("__"))


def dump(namespace):
    """names() with the values."""
    return [(k, show(namespace[k])) for k in names(namespace)]


class LogSeq(Sequence):
    """A Sequence that prints every protocol call made on it.

    Calls named in `quiet` (e.g. "len") are not printed, so a test can look at
    one aspect (which indices are read) without depending on another (how
    often len() is called)."""

    def __init__(self, items, tag="seq", quiet=()):
        self._items = list(items)
        self._tag = tag
        self._quiet = frozenset(quiet)

    def _log(self, call, *args):
        if call not in self._quiet:
            print(self._tag, call, *[show(a) for a in args])

    def __len__(self):
        self._log("len")
        return len(self._items)

    def __getitem__(self, index):
        self._log("getitem", index)
        return self._items[index]

    def __iter__(self):
        self._log("iter")
        return iter(self._items)

    def __reversed__(self):
        self._log("reversed")
        return reversed(self._items)

    def __contains__(self, item):
        self._log("contains", item)
        return item in self._items

    def index(self, *args):
        self._log("index")
        return self._items.index(*args)

    def count(self, item):
        self._log("count")
        return self._items.count(item)

    def __repr__(self):
        return "LogSeq(%r)" % (self._items,)


class LogMap(Mapping):
    """A Mapping that prints every protocol call made on it (but those in
    `quiet`, see LogSeq)."""

    def __init__(self, data, tag="map", quiet=()):
        self._data = dict(data)
        self._tag = tag
        self._quiet = frozenset(quiet)

    def _log(self, call, *args):
        if call not in self._quiet:
            print(self._tag, call, *[show(a) for a in args])

    def __len__(self):
        self._log("len")
        return len(self._data)

    def __getitem__(self, key):
        self._log("getitem", key)
        return self._data[key]

    def __iter__(self):
        self._log("iter")
        return iter(self._data)

    def __contains__(self, key):
        self._log("contains", key)
        return key in self._data

    def get(self, key, default=None):
        self._log("get", key)
        return self._data.get(key, default)

    def keys(self):
        self._log("keys")
        return self._data.keys()

    def items(self):
        self._log("items")
        return self._data.items()

    def values(self):
        self._log("values")
        return self._data.values()

    def __repr__(self):
        return "LogMap(%r)" % (self._data,)


class Props(object):
    """Attributes `a`, `b` are properties that print each read.

    `boom` raises KeyError (must propagate out of a class pattern), `gone`
    raises AttributeError (means: no match)."""

    __match_args__ = ("a", "b")

    def __init__(self, a, b):
        self._a = a
        self._b = b

    @property
    def a(self):
        print("read a")
        return self._a

    @property
    def b(self):
        print("read b")
        return self._b

    @property
    def boom(self):
        print("read boom")
        raise KeyError("boom")

    @property
    def gone(self):
        print("read gone")
        raise AttributeError("gone")

    def __repr__(self):
        return "Props(%r, %r)" % (self._a, self._b)


class Eq(object):
    """Compares equal to anything; prints each __eq__ call with its operands."""

    def __init__(self, tag):
        self.tag = tag

    def __eq__(self, other):
        print("eq", self.tag, show(other))
        return True

    def __ne__(self, other):
        print("ne", self.tag, show(other))
        return False

    __hash__ = None

    def __repr__(self):
        return "Eq(%r)" % (self.tag,)
'''

# Runs inside the interpreter under test (3.6+): reads a job as JSON on stdin,
# runs each program in its own fresh `__main__` module, writes one JSON line of
# results per program.
RUNNER = r"""
import io, json, signal, sys, traceback, types

MARK = %(mark)r


class ProgramTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise ProgramTimeout("program ran longer than %%s s" %% TIMEOUT)


def _make_tracer(filename, events):
    def tracer(frame, event, arg):
        if frame.f_code.co_filename != filename:
            return None
        if event == "call":
            events.append(["call", frame.f_code.co_name, frame.f_lineno])
        elif event == "line":
            events.append(["line", frame.f_lineno])
        return tracer

    return tracer


def run_one(prog):
    filename = prog["filename"]
    events = []
    module = types.ModuleType("__main__")
    saved_main = sys.modules.get("__main__")
    saved_stdout = sys.stdout
    buf = io.StringIO()
    error = None
    frames = []
    try:
        code = compile(prog["source"], filename, "exec")
        sys.modules["__main__"] = module
        sys.stdout = buf
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
        if prog["trace"]:
            sys.settrace(_make_tracer(filename, events))
        exec(code, module.__dict__)
    except BaseException as exc:
        sys.settrace(None)
        error = [type(exc).__name__, str(exc)]
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename == filename:
                frames.append([frame.f_code.co_name, lineno])
    finally:
        sys.settrace(None)
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout = saved_stdout
        sys.modules["__main__"] = saved_main
    return {
        "name": prog["name"],
        "stdout": buf.getvalue(),
        "error": error,
        "frames": frames,
        "trace": events if prog["trace"] else None,
    }


def main():
    global TIMEOUT
    job = json.loads(sys.stdin.read())
    TIMEOUT = job["timeout"]
    helpers = types.ModuleType("dt")
    exec(compile(job["helpers"], "<dt>", "exec"), helpers.__dict__)
    sys.modules["dt"] = helpers
    signal.signal(signal.SIGALRM, _alarm)
    out = sys.stdout
    for prog in job["programs"]:
        out.write(MARK + json.dumps(run_one(prog)) + "\n")
        out.flush()


main()
""" % {"mark": _MARK}


@dataclasses.dataclass(frozen=True)
class Program:
    """One Python 3.10 module to run natively and transpiled.

    ``trace``: also record sys.settrace call/line events of its own frames.
    ``oracles_may_differ``: CPython 3.10 and 3.12 are known to print different
    things (e.g. an error message was reworded); the transpiled run must then
    equal one of them, and the oracle-agreement check is skipped.
    ``expect_error``: the program is meant to end with an uncaught exception
    (otherwise an uncaught exception on 3.10 means the test itself is broken).
    """

    name: str
    source: str
    trace: bool = False
    oracles_may_differ: bool = False
    expect_error: bool = False

    @property
    def filename(self) -> str:
        return f"<difftest {self.name}>"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one run of a program showed, plus how it was run."""

    stdout: str
    error: tuple[str, str] | None
    frames: tuple[tuple[str, int], ...]
    trace: tuple[tuple[Any, ...], ...] | None
    # Text that was executed (the transpiled source for target runs).
    executed: str
    # Why the program could not run at all (transpiler raised, runner died).
    problem: str | None = None

    def observable(self) -> dict[str, Any]:
        """The parts a user can see; equal observables = same behaviour."""
        return {
            "problem": self.problem,
            "stdout": self.stdout,
            "error": self.error,
            "frames": self.frames,
            "trace": self.trace,
        }


def _outcome_from_json(data: Mapping[str, Any], executed: str) -> Outcome:
    return Outcome(
        stdout=data["stdout"],
        error=tuple(data["error"]) if data["error"] else None,
        frames=tuple(tuple(f) for f in data["frames"]),
        trace=(
            tuple(tuple(e) for e in data["trace"])
            if data["trace"] is not None
            else None
        ),
        executed=executed,
    )


def _failed(problem: str, executed: str) -> Outcome:
    return Outcome("", None, (), None, executed, problem)


def transpile_source(source: str, target: str, filename: str) -> tuple[str, str | None]:
    """(transpiled text, None) or (original text, why transpiling failed)."""
    try:
        from spam_transpile import transpile
    except Exception as exc:  # the core package may not be importable yet
        return source, f"cannot import spam_transpile: {type(exc).__name__}: {exc}"
    try:
        return transpile(source, target=target, filename=filename), None
    except Exception as exc:
        return source, f"transpile() raised {type(exc).__name__}: {exc}"


def run_sources(
    exe: str,
    jobs: Sequence[tuple[str, str, str, bool]],
    *,
    timeout: float = PROGRAM_TIMEOUT,
) -> list[Outcome]:
    """Run (name, filename, source, trace) jobs in one `exe` process."""
    payload = {
        "timeout": timeout,
        "helpers": HELPERS,
        "programs": [
            {"name": n, "filename": f, "source": s, "trace": t} for n, f, s, t in jobs
        ],
    }
    env = dict(os.environ)
    # Stable set/dict-of-str ordering across interpreters and runs.
    env["PYTHONHASHSEED"] = "0"
    # A lowering may import a small runtime module from the package.
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.pop("PYTHONSTARTUP", None)
    try:
        proc = subprocess.run(
            [exe, "-c", RUNNER],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=BATCH_TIMEOUT,
            env=env,
        )
        stdout, stderr = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else ""
        stderr = f"batch timed out after {BATCH_TIMEOUT} s"
    results: dict[str, dict[str, Any]] = {}
    for line in stdout.split("\n"):
        if line.startswith(_MARK):
            data = json.loads(line[len(_MARK) :])
            results[data["name"]] = data
    outcomes = []
    for name, _filename, source, _trace in jobs:
        if name in results:
            outcomes.append(_outcome_from_json(results[name], source))
        else:
            outcomes.append(
                _failed(f"runner died before reporting: {stderr[-2000:]}", source)
            )
    return outcomes


def run_native(programs: Sequence[Program], exe: str) -> dict[str, Outcome]:
    """Run the programs unchanged (the interpreter must be 3.10+)."""
    jobs = [(p.name, p.filename, p.source, p.trace) for p in programs]
    return {p.name: o for p, o in zip(programs, run_sources(exe, jobs))}


def run_transpiled(
    programs: Sequence[Program], exe: str, target: str
) -> dict[str, Outcome]:
    """Transpile each program for `target` (here) and run the result on `exe`."""
    jobs = []
    failed: dict[str, Outcome] = {}
    for p in programs:
        text, problem = transpile_source(p.source, target, p.filename)
        if problem is not None:
            failed[p.name] = _failed(problem, text)
        else:
            jobs.append((p.name, p.filename, text, p.trace))
    ran = {j[0]: o for j, o in zip(jobs, run_sources(exe, jobs))}
    return {p.name: failed.get(p.name) or ran[p.name] for p in programs}


@functools.lru_cache(maxsize=None)
def cached_native(programs: tuple[Program, ...], exe: str) -> dict[str, Outcome]:
    return run_native(programs, exe)


@functools.lru_cache(maxsize=None)
def cached_transpiled(
    programs: tuple[Program, ...], exe: str, target: str
) -> dict[str, Outcome]:
    return run_transpiled(programs, exe, target)


def _numbered(text: str) -> str:
    return "\n".join(f"{i:4d}  {line}" for i, line in enumerate(text.splitlines(), 1))


def _diff_field(
    field: str, want: Any, got: Any, names: tuple[str, str] = ("cpython", "transpiled")
) -> str:
    if field == "stdout" or isinstance(want, (list, tuple)):
        want_lines = (
            want.splitlines() if isinstance(want, str) else [repr(x) for x in want]
        )
        got_lines = got.splitlines() if isinstance(got, str) else [repr(x) for x in got]
        diff = difflib.unified_diff(want_lines, got_lines, *names, lineterm="", n=3)
        return f"--- {field} differs:\n" + "\n".join(diff)
    return (
        f"--- {field} differs:\n  {names[0]}: {want!r}\n  {names[1]}: {got!r}"
    )


def explain_mismatch(
    source: str, oracles: Mapping[str, Outcome], target: str, actual: Outcome
) -> str | None:
    """None if `actual` equals one oracle's observable, else a readable report."""
    observed = actual.observable()
    for outcome in oracles.values():
        if outcome.observable() == observed:
            return None
    version, reference = next(iter(oracles.items()))
    want = reference.observable()
    parts = [
        f"transpiled program on {target} behaves differently from CPython {version}"
    ]
    if actual.problem:
        parts.append(f"--- could not run: {actual.problem}")
    for field in ("stdout", "error", "frames", "trace"):
        if want[field] != observed[field]:
            parts.append(_diff_field(field, want[field], observed[field]))
    parts.append("--- original program:\n" + _numbered(source))
    if actual.executed != source:
        parts.append(f"--- transpiled for {target}:\n" + _numbered(actual.executed))
    return "\n".join(parts)


def explain_oracle_disagreement(
    source: str, oracles: Mapping[str, Outcome], ignore: Iterable[str] = ()
) -> str | None:
    """None if all native CPythons agree (on the fields not in `ignore`)."""
    fields = [f for f in ("problem", "stdout", "error", "frames", "trace") if f not in ignore]
    items = list(oracles.items())
    first_version, first = items[0]
    for version, outcome in items[1:]:
        a, b = first.observable(), outcome.observable()
        differing = [f for f in fields if a[f] != b[f]]
        if differing:
            names = (f"cpython{first_version}", f"cpython{version}")
            parts = [f"CPython {first_version} and {version} disagree on this program"]
            parts += [_diff_field(f, a[f], b[f], names) for f in differing]
            parts.append(_numbered(source))
            return "\n".join(parts)
    return None


def dedent(text: str) -> str:
    """textwrap.dedent plus dropping the first newline of a triple-quoted block."""
    import textwrap

    return textwrap.dedent(text).lstrip("\n")


def iter_batches(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
