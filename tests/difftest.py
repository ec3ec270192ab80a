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
import multiprocessing as mp
import os
import random
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Mapping, Protocol, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent

# CPython 3.10 is the oracle the transpiler promises to reproduce; 3.12 is run
# too (when present) because a test whose result depends on the CPython version
# needs to be known as such.
ORACLE_VERSION = "3.10"
EXTRA_ORACLE_VERSIONS = ("3.12",)
TARGET_VERSIONS = ("3.9", "3.8", "3.7", "3.6")

# Per program, in seconds: a lowering that lets a `break` hit a loop of its own
# turns `while True: match ...` into an endless loop; that must fail one
# program, not hang the suite.
PROGRAM_TIMEOUT = 5.0
BATCH_TIMEOUT = 300.0

_MARK = "@@difftest-result@@ "

# The helper module programs import as `dt`. It runs on every interpreter the
# runner runs on (3.6+), so: no match statements, no walrus, no 3.10 APIs.
HELPERS = r'''
import os
import re
from collections.abc import Mapping, Sequence


def show(value):
    """repr() without memory addresses, which differ between runs, and
    with the module ``ast`` nodes name in their repr before 3.9 (``_ast``)."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", repr(value))
    return text.replace("<_ast.", "<ast.")


def ev(label, value):
    """Return value, printing that `label` was evaluated (counts evaluations)."""
    print("eval", label)
    return value


def same(value):
    """The value itself: a subject that is computed, not a local name."""
    return value


def names(namespace):
    """The user-visible names of locals()/globals()/vars(cls), sorted.

    ``_spam`` is the one private module-level name a transpiled module may
    add: its helper (SEMANTICS.md), never a temporary.
    """
    return sorted(k for k in namespace if not k.startswith("__") and k != "_spam")


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


def dump_user(namespace):
    """dump() without the subject temporary a transpiled closure or class
    body keeps when no case matched (README, "Known limits")."""
    return [
        (k, show(namespace[k]))
        for k in names(namespace)
        if not k.startswith("_spam") and not _hidden(k)
    ]


def caller_globals():
    """The globals of the frame that calls this, as ``globals()`` there."""
    import sys

    return sys._getframe(1).f_globals


def dump_module(namespace):
    """dump() of a module's lowercase globals (the subject and the captures)
    without modules, functions and classes, and without private names (a
    temporary an exception left)."""
    import types

    skip = (types.ModuleType, types.FunctionType, type)
    return [
        (k, show(v))
        for k, v in sorted(namespace.items())
        if k.islower()
        and not k.startswith("_")
        and not isinstance(v, skip)
        and not _hidden(k)
    ]


def _hidden(name):
    """Whether ``name`` is one of the variables a layout adds on purpose
    (scripts/fuzz.py --layout readable sets DIFFTEST_HIDDEN_NAMES to those of
    the readable layout, which in a function stay locals, as in hand-written
    code: README, Known limits). Both runs hide the same names."""
    pattern = os.environ.get("DIFFTEST_HIDDEN_NAMES")
    return bool(pattern) and re.fullmatch(pattern, name) is not None


class Hybrid(object):
    """A sequence of `items` and a mapping of `data`: which one a pattern sees
    depends only on the kind CPython gives the class (its type flags)."""

    def __init__(self, items=(), data=None):
        self.items = list(items)
        self.data = dict(data or {})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, key):
        # An int within the items is an index; any other key (an int key of
        # `data` too) is a key, so that copying it as a mapping (`**rest`:
        # keys() and [], calls PEP 634 leaves unspecified) cannot raise.
        if type(key) is int and -len(self.items) <= key < len(self.items):
            return self.items[key]
        return self.data[key]

    def __iter__(self):
        return iter(self.items)

    def get(self, key, default=None):
        return self.data.get(key, default)

    def keys(self):
        return self.data.keys()

    def __repr__(self):
        return "%s(%r, %r)" % (type(self).__name__, self.items, self.data)


class HybridMap(Hybrid):
    """Hybrid whose len() and iteration are those of `data` (CPython does not
    try a mapping pattern with more keys than len() says)."""

    def __len__(self):
        return len(self.data)

    def __iter__(self):
        return iter(self.data)


# Classes whose kind comes from the ABCs in every way CPython 3.10+ knows: a
# registration after the class was created, both ABCs as bases in either
# order, a registration that reaches a subclass created before it, builtins.
# DIFFTEST_ABC_KINDS (the readable layout, which asks collections.abc: README,
# Known limits): each has one kind, on which the ABCs and CPython's flags
# agree, and no str is a sequence.
ABC_KINDS = bool(os.environ.get("DIFFTEST_ABC_KINDS"))


# Each reads its items one way, whichever protocol is asked: the readable
# layout tests a key with ``in`` and ``[]`` where CPython calls ``get``, and
# reads items before a star by index where CPython iterates (README, Known
# limits), so a class whose protocols disagree tells the two apart.


class _MappingKind:
    """DIFFTEST_ABC_KINDS: a mapping's ``[]`` agrees with its ``get``."""

    def __getitem__(self, key):
        return self.data[key]


class _SequenceKind:
    """DIFFTEST_ABC_KINDS: a sequence's length and iteration agree with its
    indexing."""

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


def _kinds(abc_kinds: tuple, flags: tuple) -> tuple:
    return abc_kinds if ABC_KINDS else flags


class SeqThenMap(
    *_kinds((_SequenceKind, HybridMap, Sequence), (HybridMap, Sequence))
):
    pass


class MapThenSeq(*_kinds((_MappingKind, Hybrid, Mapping), (Hybrid, Mapping))):
    pass


class SeqMap(*_kinds((Hybrid, Sequence), (Hybrid, Sequence, Mapping))):
    pass


class MapSeq(
    *_kinds((_MappingKind, HybridMap, Mapping), (HybridMap, Mapping, Sequence))
):
    pass


class RegBase(*_kinds((_SequenceKind, HybridMap, Sequence), (HybridMap, Sequence))):
    pass


class RegKid(RegBase):
    pass


class RegPlain(Hybrid):
    pass


class ListAsMap(list):
    def __init__(self, items=(), data=None):
        list.__init__(self, items)
        self.data = dict(data or {})

    def __getitem__(self, key):
        # As Hybrid's: an int outside the list is a key of ``data``, so that
        # copying it as a mapping (``**rest``) cannot raise. PEP 634 leaves
        # whether that copy is made before a later key's sub-pattern fails
        # open (CPython makes it, the lowering does not), so an IndexError
        # there would be a difference no program may rely on.
        if type(key) is int and -list.__len__(self) <= key < list.__len__(self):
            return list.__getitem__(self, key)
        return self.data[key]

    if not ABC_KINDS:  # (else a list: its length and iteration are its own)

        def __len__(self):
            return len(self.data)

        def __iter__(self):
            return iter(self.data)

    get = Hybrid.get
    keys = Hybrid.keys

    def __repr__(self):
        # (Hybrid's reads an ``items`` attribute, which a list has not)
        return "%s(%s, %r)" % (type(self).__name__, list.__repr__(self), self.data)


class StrSeq(*((str,) if ABC_KINDS else (str, Sequence))):
    pass


class StrAsSeq(str):
    pass


if not ABC_KINDS:
    Mapping.register(SeqThenMap)
    Sequence.register(MapThenSeq)
    Mapping.register(RegBase)
    Mapping.register(ListAsMap)
    Sequence.register(StrAsSeq)
Sequence.register(RegPlain)


class RegPlainKid(RegPlain):
    pass


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


def _make_tracer(filename, events, mode):
    # mode "exact": call and line events of every frame of the program's code.
    # mode "user-lines": line events of the user's own functions only (frames
    # of comprehensions and lambdas are skipped), repeats of a line collapsed.
    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_filename != filename:
            return None
        if mode == "user-lines":
            if code.co_name.startswith("<") and code.co_name != "<module>":
                return None
            if event == "line" and events[-1:] != [["line", frame.f_lineno]]:
                events.append(["line", frame.f_lineno])
            return tracer
        if event == "call":
            events.append(["call", code.co_name, frame.f_lineno])
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
            sys.settrace(_make_tracer(filename, events, prog["trace"]))
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

    ``trace``: also record sys.settrace events of its own frames: "exact" (all
    call and line events) or "user-lines" (line events of named functions and
    the module only, consecutive repeats collapsed: what a coverage tool or a
    stepping debugger shows). Empty: no tracing.
    ``oracles_may_differ``: CPython 3.10 and 3.12 are known to print different
    things (e.g. an error message was reworded); the transpiled run must then
    equal one of them, and the oracle-agreement check is skipped.
    ``expect_error``: the program is meant to end with an uncaught exception
    (otherwise an uncaught exception on 3.10 means the test itself is broken).
    """

    name: str
    source: str
    trace: str = ""
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
        """The parts a user can see; equal observables = same behaviour.

        Lines that log protocol calls (``len``, ``__getitem__``, ``__iter__``,
        ``get``, attribute reads, ...) are left out: PEP 634 ("Side effects
        and undefined behavior") leaves how many of them happen, and in which
        order, unspecified, and the lowering uses that freedom.
        """
        return {
            "problem": self.problem,
            "stdout": _without_protocol_calls(self.stdout),
            "error": self.error,
            "frames": self.frames,
            "trace": self.trace,
        }


PROTOCOL_CALL = re.compile(
    r"^(?:\S+ (?:len|getitem|iter|reversed|contains|index|count|get|keys|items"
    r"|values)|read)(?: .*)?$"
)


def _without_protocol_calls(stdout: str) -> str:
    if not stdout:
        return stdout
    lines = stdout.splitlines(keepends=True)
    return "".join(line for line in lines if not PROTOCOL_CALL.match(line.rstrip("\n")))


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


#: the layout transpile_source() writes (use_layout() sets it)
LAYOUT = "keep-lines"


def use_layout(layout: str) -> None:
    """Transpile to ``layout`` from now on (before any worker is forked).

    The readable layout names a computed subject, a shared length and a
    mapping's values read by several cases (``subject``, ``size``,
    ``s_key``), which stay locals of a function as in hand-written code
    (README, Known limits): the dumps of both runs leave them out. The
    generated programs' own names are single letters.
    """
    global LAYOUT
    LAYOUT = layout
    if layout == "readable":
        os.environ["DIFFTEST_HIDDEN_NAMES"] = r"subject|size|\w+_\w+"
        os.environ["DIFFTEST_ABC_KINDS"] = "1"
    else:
        os.environ.pop("DIFFTEST_HIDDEN_NAMES", None)
        os.environ.pop("DIFFTEST_ABC_KINDS", None)


def transpile_source(source: str, target: str, filename: str) -> tuple[str, str | None]:
    """(transpiled text, None) or (original text, why transpiling failed)."""
    try:
        from spam_transpile import transpile
    except Exception as exc:  # the core package may not be importable yet
        return source, f"cannot import spam_transpile: {type(exc).__name__}: {exc}"
    try:
        return transpile(source, target=target, filename=filename, layout=LAYOUT), None
    except Exception as exc:
        return source, f"transpile() raised {type(exc).__name__}: {exc}"


def _transpile_job(job: tuple[str, str, str]) -> tuple[str, str | None]:
    source, target, filename = job
    return transpile_source(source, target, filename)


def transpile_many(
    sources: Sequence[tuple[str, str]], target: str
) -> list[tuple[str, str | None]]:
    """transpile_source() over (source, filename) pairs, on all CPUs: the
    transpiler, not the interpreters, is what makes a large batch slow."""
    jobs = [(source, target, filename) for source, filename in sources]
    workers = min(4, os.cpu_count() or 1)
    if len(jobs) < 16 or workers < 2 or "fork" not in mp.get_all_start_methods():
        return [_transpile_job(job) for job in jobs]
    # fork: the workers inherit the imported transpiler and sys.path.
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        return list(pool.map(_transpile_job, jobs, chunksize=4))


def _run_batch(
    exe: str, jobs: Sequence[tuple[str, str, str, str]], timeout: float
) -> tuple[dict[str, dict[str, Any]], str]:
    """Results by program name of one runner process, and its stderr."""
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
    return results, stderr


def run_sources(
    exe: str,
    jobs: Sequence[tuple[str, str, str, str]],
    *,
    timeout: float = PROGRAM_TIMEOUT,
) -> list[Outcome]:
    """Run (name, filename, source, trace) jobs in one `exe` process.

    If the process dies (a program crashed the interpreter or exited), the
    program it was running is reported as such and the rest run in a new one."""
    results: dict[str, Outcome] = {}
    pending = list(jobs)
    while pending:
        reported, stderr = _run_batch(exe, pending, timeout)
        for name, _filename, source, _trace in pending:
            if name in reported:
                results[name] = _outcome_from_json(reported[name], source)
        missing = [job for job in pending if job[0] not in reported]
        if missing:
            name, _filename, source, _trace = missing[0]
            problem = f"the interpreter died running this program: {stderr[-2000:]}"
            results[name] = _failed(problem, source)
        pending = missing[1:]
    return [results[job[0]] for job in jobs]


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
    texts = transpile_many([(p.source, p.filename) for p in programs], target)
    for p, (text, problem) in zip(programs, texts):
        if problem is not None:
            failed[p.name] = _failed(problem, text)
        else:
            jobs.append((p.name, p.filename, text, p.trace))
    ran = {j[0]: o for j, o in zip(jobs, run_sources(exe, jobs))}
    return {p.name: failed.get(p.name) or ran[p.name] for p in programs}


@functools.lru_cache(maxsize=None)
def _cached_native(
    programs: tuple[Program, ...], exe: str, layout: str
) -> dict[str, Outcome]:
    return run_native(programs, exe)


def cached_native(programs: tuple[Program, ...], exe: str) -> dict[str, Outcome]:
    # per layout: the helpers' classes differ for the readable one (use_layout)
    return _cached_native(programs, exe, LAYOUT)


@functools.lru_cache(maxsize=None)
def _cached_transpiled(
    programs: tuple[Program, ...], exe: str, target: str, layout: str
) -> dict[str, Outcome]:
    return run_transpiled(programs, exe, target)


def cached_transpiled(
    programs: tuple[Program, ...], exe: str, target: str
) -> dict[str, Outcome]:
    return _cached_transpiled(programs, exe, target, LAYOUT)


def _numbered(text: str, same_as: str | None = None) -> str:
    """Numbered lines; with `same_as`, a long common start is elided."""
    lines = text.splitlines()
    skip = 0
    if same_as is not None:
        for mine, theirs in zip(lines, same_as.splitlines()):
            if mine != theirs:
                break
            skip += 1
    if skip < 5:
        skip = 0
    out = [f"   1-{skip}  (same as the original)"] if skip else []
    out += [f"{i:4d}  {line}" for i, line in enumerate(lines[skip:], skip + 1)]
    return "\n".join(out)


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
    return f"--- {field} differs:\n  {names[0]}: {want!r}\n  {names[1]}: {got!r}"


def explain_mismatch(
    source: str, oracles: Mapping[str, Outcome], target: str, actual: Outcome
) -> str | None:
    """None if `actual` equals one oracle's observable, else a readable report."""
    observed = actual.observable()
    for outcome in oracles.values():
        if outcome.observable() == observed:
            return None
    if not oracles:
        return f"transpiled program on {target}: {actual.problem}\n" + _numbered(source)
    version, reference = next(iter(oracles.items()))
    want = reference.observable()
    parts = [
        f"transpiled program on {target} behaves differently from CPython {version}"
    ]
    if actual.problem:
        parts.append(f"--- could not run: {actual.problem}")
    else:
        for field in ("stdout", "error", "frames", "trace"):
            if want[field] != observed[field]:
                parts.append(_diff_field(field, want[field], observed[field]))
    parts.append("--- original program:\n" + _numbered(source))
    if actual.executed != source:
        listing = _numbered(actual.executed, same_as=source)
        parts.append(f"--- transpiled for {target}:\n" + listing)
    return "\n".join(parts)


def explain_oracle_disagreement(
    source: str, oracles: Mapping[str, Outcome], ignore: Iterable[str] = ()
) -> str | None:
    """None if all native CPythons agree (on the fields not in `ignore`)."""
    fields = [
        f for f in ("problem", "stdout", "error", "frames", "trace") if f not in ignore
    ]
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
    return textwrap.dedent(text).lstrip("\n")


# ---------------------------------------------------------------------------
# Random match statements and subjects (tests/test_properties.py, scripts/fuzz.py)
# ---------------------------------------------------------------------------
#
# Generation is written against a tiny `Chooser` interface so that the same code
# runs from `random.Random` (the fuzzer: fast, reproducible from a seed) and from
# hypothesis' `data.draw` (the property test: shrinkable). Choices are ordered
# simplest-first and `chance()` is False at 0, so hypothesis shrinks towards
# small, plain programs.


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]; shrinks towards lo."""


class RandomChooser:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


def pick(ch: Chooser, options: Sequence[Any]) -> Any:
    return options[ch.integer(0, len(options) - 1)]


def chance(ch: Chooser, percent: int) -> bool:
    # 0 (where hypothesis shrinks to) means "no".
    return ch.integer(0, 99) >= 100 - percent


# Classes and values the generated patterns and subjects refer to.
RANDOM_PRELUDE = '''\
import ast, collections, dataclasses, enum, re
import dt
from ast import UnaryOp


@dataclasses.dataclass
class Pt:
    x: object = None
    y: object = None


class Box:
    __match_args__ = ("item",)

    def __init__(self, item=None):
        self.item = item

    def __repr__(self):
        return "Box(%r)" % (self.item,)


NT = collections.namedtuple("NT", "l r")


@dataclasses.dataclass(frozen=True)
class FPt:
    a: object = None
    b: object = None


class V:
    ONE = 1
    F = 1.0
    S = "a"
    T = True
    N = None


class Color(enum.Enum):
    RED = 1
    BLUE = "b"


def G(tag, *values):
    """A guard: prints that it ran and answers from the values."""
    text = dt.show(values)
    print("guard", tag, text)
    return len(text) % 3 != 0


def run(fn, tag, subject):
    """Call fn on a fresh value of the subject expression (a string: the
    transpiler has nothing to do with it, and thousands of them as code would
    only slow it down). In a copy of the globals: ``eval`` with the
    caller's own may bind any name, and the lowering would know nothing of
    the module's classes (dynamic_names)."""
    print("==", tag)
    try:
        fn(eval(subject, dict(globals())))
    except Exception as e:
        print("raised", type(e).__name__, re.sub(r" at 0x[0-9a-fA-F]+", "", str(e)))


def run_all(functions, subjects):
    for i, (fn, exprs) in enumerate(zip(functions, subjects)):
        for j, expr in enumerate(exprs):
            if fn is not None:
                run(fn, "f%d/%d" % (i, j), expr)


def each(i):
    """The subjects of module-level statement i, as run() gives them."""
    for j, expr in enumerate(SUBJECTS[i]):
        print("==", "f%d/%d" % (i, j))
        try:
            yield eval(expr, dict(globals()))
        except Exception as e:
            raised(e)


def raised(e):
    print("raised", type(e).__name__, re.sub(r" at 0x[0-9a-fA-F]+", "", str(e)))
'''

NAME_POOL = tuple("abcdefghjkmn")

# dt classes whose kind comes from the ABCs (HELPERS), built from a list of
# items (sequences) or a dict (mappings).
HYBRID_SEQUENCES = ("MapThenSeq", "SeqMap", "RegPlain", "RegPlainKid")
HYBRID_MAPPINGS = ("SeqThenMap", "MapSeq", "RegBase", "RegKid", "ListAsMap")

# Literal patterns and the expression a matching subject can use.
LITERALS = (
    "0", "1", "-1", "2", "1.0", "2.5", "-0.0", "1+2j", "-1-2j", "True", "False",
    "None", "''", "'a'", "'ab'", "b'a'", "b''", "'a' 'b'",
)  # fmt: skip
# A switch's literals: ints and strs only, the kinds a long run may be split
# on; and subjects that take the slow path there (other types, or an
# ``__eq__`` of their own).
SWITCH_LITERALS = tuple(str(i) for i in range(-2, 20)) + (
    "0x10", "1_0", "'a'", "'b'", "''", "'ab'", "'a' 'b'", "'0'", "'if'",
)  # fmt: skip
SWITCH_SUBJECTS = (
    "True", "False", "1.0", "3.0", "2.5", "V.ONE", "Color.RED", "dt.Eq('e')",
    "dt.StrAsSeq('a')", "dt.StrSeq('ab')", "[]", "None", "b'a'", "16.0", "10",
)  # fmt: skip
VALUES = ("V.ONE", "V.F", "V.S", "V.T", "V.N", "Color.RED", "Color.BLUE")

# Mapping keys with an equality group: literal keys of one mapping pattern must
# have distinct groups (1 == True == 1.0 is a compile-time duplicate). Value
# keys are not checked at compile time; a runtime clash is a ValueError.
KEYS = (
    ("'a'", 1), ("'b'", 2), ("0", 3), ("1", 4), ("True", 4), ("False", 3),
    ("-1", 5), ("2.5", 6), ("None", 7), ("b'k'", 8), ("'a b'", 9),
)  # fmt: skip
VALUE_KEYS = (("V.S", 1), ("Color.RED", 10), ("V.ONE", 4))


def _key_group(key: str) -> int:
    """The group of keys equal to ``key``."""
    return dict(KEYS + VALUE_KEYS)[key]


@dataclasses.dataclass(frozen=True)
class ClassSpec:
    name: str
    match_args: tuple[str, ...]
    # Attributes that exist (besides match_args) and some that do not.
    other_attrs: tuple[str, ...]
    # Expression of an instance with given attributes, or None for builtins.
    build: str | None


CLASSES = (
    ClassSpec("Pt", ("x", "y"), ("z",), "Pt({x}, {y})"),
    ClassSpec("Box", ("item",), ("other",), "Box({item})"),
    ClassSpec("NT", ("l", "r"), ("nope",), "NT({l}, {r})"),
    # frozen: the readable layout reads its fields again (inlined_captures)
    ClassSpec("FPt", ("a", "b"), ("nope",), "FPt({a}, {b})"),
    # standard library classes the keep-lines layout knows from its table
    # (nodes built by hand have no ``lineno``)
    ClassSpec(
        "ast.BinOp",
        ("left", "op", "right"),
        ("lineno",),
        "ast.BinOp({left}, {op}, {right})",
    ),
    ClassSpec("UnaryOp", ("op", "operand"), ("lineno",), "UnaryOp({op}, {operand})"),
    ClassSpec("int", ("",), ("real", "imag"), None),
    ClassSpec("str", ("",), ("missing",), None),
    ClassSpec("bool", ("",), ("real",), None),
    ClassSpec("float", ("",), ("real",), None),
    ClassSpec("bytes", ("",), (), None),
    ClassSpec("list", ("",), (), None),
    ClassSpec("tuple", ("",), (), None),
    ClassSpec("dict", ("",), (), None),
    ClassSpec("complex", (), ("real", "imag"), None),
    ClassSpec("object", (), ("missing",), None),
)
BUILTIN_SAMPLES = {
    "int": "3", "str": "'s'", "bool": "True", "float": "1.5", "bytes": "b'x'",
    "list": "[1]", "tuple": "(1,)", "dict": "{'a': 1}", "complex": "2j",
    "object": "None",
}  # fmt: skip


class Pattern:
    """A generated pattern: its source text, the names it binds, and how to
    build a subject that (probably) matches it."""

    names: tuple[str, ...] = ()
    irrefutable: bool = False

    def render(self) -> str:
        raise NotImplementedError

    def witness(self, gen: "ProgramGen") -> str:
        raise NotImplementedError


@dataclasses.dataclass
class PLiteral(Pattern):
    text: str

    def render(self) -> str:
        return self.text

    def witness(self, gen: "ProgramGen") -> str:
        return self.text


@dataclasses.dataclass
class PValue(Pattern):
    text: str

    def render(self) -> str:
        return self.text

    def witness(self, gen: "ProgramGen") -> str:
        return self.text


@dataclasses.dataclass
class PCapture(Pattern):
    name: str | None  # None: the wildcard `_`

    def __post_init__(self) -> None:
        self.names = (self.name,) if self.name else ()
        self.irrefutable = True

    def render(self) -> str:
        return self.name or "_"

    def witness(self, gen: "ProgramGen") -> str:
        return gen.subject(1)


@dataclasses.dataclass
class PSequence(Pattern):
    items: list[Pattern]
    star_at: int | None  # index in the rendered list where the star goes
    star_name: str | None
    tuple_style: bool

    def __post_init__(self) -> None:
        self.names = sum((p.names for p in self.items), ()) + (
            (self.star_name,) if self.star_name else ()
        )

    def render(self) -> str:
        parts = [p.render() for p in self.items]
        if self.star_at is not None:
            parts.insert(self.star_at, "*" + (self.star_name or "_"))
        if self.tuple_style:
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        return "[" + ", ".join(parts) + "]"

    def witness(self, gen: "ProgramGen") -> str:
        elems = [p.witness(gen) for p in self.items]
        if self.star_at is not None:
            extra = [gen.subject(1) for _ in range(gen.ch.integer(0, 2))]
            elems[self.star_at : self.star_at] = extra
        return gen.sequence_of(elems)


@dataclasses.dataclass
class PMapping(Pattern):
    items: list[tuple[str, Pattern]]
    rest: str | None

    def __post_init__(self) -> None:
        self.names = sum((p.names for _, p in self.items), ()) + (
            (self.rest,) if self.rest else ()
        )

    def render(self) -> str:
        parts = [f"{k}: {p.render()}" for k, p in self.items]
        if self.rest:
            parts.append("**" + self.rest)
        return "{" + ", ".join(parts) + "}"

    def witness(self, gen: "ProgramGen") -> str:
        entries = [(k, p.witness(gen)) for k, p in self.items]
        for _ in range(gen.ch.integer(0, 1)):
            entries.append((pick(gen.ch, KEYS)[0], gen.subject(1)))
        return gen.mapping_of(entries)


@dataclasses.dataclass
class PClass(Pattern):
    spec: ClassSpec
    positional: list[Pattern]
    keywords: list[tuple[str, Pattern]]

    def __post_init__(self) -> None:
        self.names = sum((p.names for p in self.positional), ()) + sum(
            (p.names for _, p in self.keywords), ()
        )

    def render(self) -> str:
        parts = [p.render() for p in self.positional]
        parts += [f"{k}={p.render()}" for k, p in self.keywords]
        return f"{self.spec.name}({', '.join(parts)})"

    def witness(self, gen: "ProgramGen") -> str:
        spec = self.spec
        if spec.build is None:
            if self.positional:
                return self.positional[0].witness(gen)
            return BUILTIN_SAMPLES[spec.name]
        attrs = {a: gen.subject(1) for a in spec.match_args}
        for attr, p in zip(spec.match_args, self.positional):
            attrs[attr] = p.witness(gen)
        for attr, p in self.keywords:
            if attr in attrs:
                attrs[attr] = p.witness(gen)
        return spec.build.format(**attrs)


@dataclasses.dataclass
class POr(Pattern):
    alternatives: list[Pattern]

    def __post_init__(self) -> None:
        self.names = self.alternatives[0].names
        self.irrefutable = any(p.irrefutable for p in self.alternatives)

    def render(self) -> str:
        return " | ".join(_closed(p) for p in self.alternatives)

    def witness(self, gen: "ProgramGen") -> str:
        return pick(gen.ch, self.alternatives).witness(gen)


@dataclasses.dataclass
class PAs(Pattern):
    inner: Pattern
    name: str

    def __post_init__(self) -> None:
        self.names = self.inner.names + (self.name,)
        self.irrefutable = self.inner.irrefutable

    def render(self) -> str:
        return f"{_closed(self.inner)} as {self.name}"

    def witness(self, gen: "ProgramGen") -> str:
        return self.inner.witness(gen)


@dataclasses.dataclass
class PGroup(Pattern):
    inner: Pattern

    def __post_init__(self) -> None:
        self.names = self.inner.names
        self.irrefutable = self.inner.irrefutable

    def render(self) -> str:
        return f"({self.inner.render()})"

    def witness(self, gen: "ProgramGen") -> str:
        return self.inner.witness(gen)


def _closed(p: Pattern) -> str:
    """Parenthesize or/as patterns where they are operands of `|` or `as`."""
    text = p.render()
    return f"({text})" if isinstance(p, (POr, PAs)) else text


def _refutable(p: Pattern) -> Pattern:
    """A refutable pattern binding the same names (`[p]`): CPython rejects an
    irrefutable case or alternative anywhere but last."""
    return PSequence([p], None, None, False) if p.irrefutable else p


@dataclasses.dataclass
class Case:
    pattern: Pattern
    guard: bool


# Where a generated match statement runs: a function (as most do), a
# closure reading the subject from the enclosing function, a class body, the
# module itself (in a loop over the subjects), or a "quiet" function: one
# that reads its captures only in the bodies and guards of the cases that
# capture them and never calls locals(), where the lowering may store a
# capture where its value is first read (spam_transpile.lowering.early_binding).
SCOPES = ("function", "closure", "class", "module", "quiet")


@dataclasses.dataclass
class MatchSpec:
    cases: list[Case]
    scope: str = "function"
    #: how the statement names its subject: "s" (a local name), "call" (a
    #: computed subject: ``dt.same(s)``) or "pair" (``dt.same(s), 0`` with
    #: every pattern as the first of two: a tuple subject's elements)
    subject: str = "s"
    #: starts with a long run of literal cases (``ProgramGen._switch_spec``)
    switch: bool = False
    #: every case body ends with ``return`` (functions only): the readable
    #: layout's decision tree may then end a chain at a nested test
    leaves: bool = False


class ProgramGen:
    """Generates match statements, subjects and whole programs."""

    def __init__(self, ch: Chooser, *, instrumented: bool = True) -> None:
        self.ch = ch
        # LogSeq/LogMap subjects: their call logs (len() excluded) are printed.
        self.instrumented = instrumented
        self._used: set[str] = set()

    # -- patterns ----------------------------------------------------------

    def _fresh(self) -> str | None:
        free = [n for n in NAME_POOL if n not in self._used]
        if not free:
            return None
        name = pick(self.ch, free)
        self._used.add(name)
        return name

    def _split(self, names: tuple[str, ...], k: int) -> list[tuple[str, ...]]:
        groups: list[list[str]] = [[] for _ in range(k)]
        for n in names:
            groups[self.ch.integer(0, k - 1)].append(n)
        return [tuple(g) for g in groups]

    def pattern(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        """A pattern binding fresh names (req None) or exactly `req`."""
        ch = self.ch
        if req is None:
            leaf = ["literal", "capture", "wildcard", "value"]
            kinds = leaf if depth <= 0 else leaf + [
                "sequence", "mapping", "class", "or", "as", "group",
            ]  # fmt: skip
        elif not req:
            leaf = ["literal", "wildcard", "value"]
            kinds = leaf if depth <= 0 else leaf + [
                "sequence", "mapping", "class", "or", "group",
            ]  # fmt: skip
        elif depth <= 0:
            if len(req) == 1:
                return PCapture(req[0])
            return PSequence([PCapture(n) for n in req], None, None, False)
        else:
            kinds = ["sequence", "mapping", "class", "or", "as", "group"]
            if len(req) == 1:
                kinds.insert(0, "capture")
        kind = pick(ch, kinds)
        return getattr(self, "_" + kind)(req, depth - 1)

    def _literal(self, req: Any, depth: int) -> Pattern:
        return PLiteral(pick(self.ch, LITERALS))

    def _value(self, req: Any, depth: int) -> Pattern:
        return PValue(pick(self.ch, VALUES))

    def _wildcard(self, req: Any, depth: int) -> Pattern:
        return PCapture(None)

    def _capture(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        return PCapture(req[0] if req else self._fresh())

    def _group(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        return PGroup(self.pattern(req, depth))

    def _as(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        if req is None:
            inner = self.pattern(None, depth)
            name = self._fresh()
            return PAs(inner, name) if name else inner
        return PAs(self.pattern(req[:-1], depth), req[-1])

    def _or(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        first = self.pattern(req, depth)
        alts = [first] + [
            self.pattern(first.names, depth) for _ in range(self.ch.integer(1, 2))
        ]
        # Only the last alternative may be irrefutable.
        alts = [_refutable(p) for p in alts[:-1]] + alts[-1:]
        return POr(alts)

    def _sequence(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        ch = self.ch
        n = ch.integer(0, 3)
        star = pick(ch, ["none", "wild", "named"])
        star_name = None
        if req is None:
            items = [self.pattern(None, depth) for _ in range(n)]
            if star == "named":
                star_name = self._fresh()
        else:
            names = req
            if star == "named" and names:
                star_name, names = names[0], names[1:]
            elif star == "named":
                star = "wild"
            if names and n == 0:
                n = 1
            items = [self.pattern(g, depth) for g in self._split(names, n)] if n else []
        star_at = None if star == "none" else ch.integer(0, len(items))
        return PSequence(items, star_at, star_name, chance(ch, 30))

    def _mapping(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        ch = self.ch
        keys: list[str] = []
        groups: set[int] = set()
        for _ in range(ch.integer(0, 3)):
            if chance(ch, 15):
                keys.append(pick(ch, VALUE_KEYS)[0])
                continue
            key, group = pick(ch, KEYS)
            if group not in groups:  # else a compile-time duplicate key
                keys.append(key)
                groups.add(group)
        keys = list(dict.fromkeys(keys))
        with_rest = chance(ch, 30)
        rest = None
        if req is None:
            values = [self.pattern(None, depth) for _ in keys]
            if with_rest:
                rest = self._fresh()
        else:
            names = req
            if with_rest and names:
                rest, names = names[0], names[1:]
            if names and not keys:
                keys = [pick(ch, KEYS)[0]]
            values = (
                [self.pattern(g, depth) for g in self._split(names, len(keys))]
                if keys
                else []
            )
        return PMapping(list(zip(keys, values)), rest)

    def _class(self, req: tuple[str, ...] | None, depth: int) -> Pattern:
        ch = self.ch
        spec = pick(ch, CLASSES)
        n_pos = ch.integer(0, len(spec.match_args))
        if chance(ch, 5):
            n_pos += 1  # too many positional sub-patterns: TypeError
        attrs = [a for a in spec.match_args[n_pos:] + spec.other_attrs if a]
        if chance(ch, 5) and spec.match_args[:n_pos] and spec.match_args[0]:
            attrs.append(spec.match_args[0])  # same attribute twice: TypeError
        kw = [a for a in attrs if chance(ch, 30)]
        k = n_pos + len(kw)
        if req is None:
            subs = [self.pattern(None, depth) for _ in range(k)]
        else:
            if req and k == 0:
                kw = [attrs[0]] if attrs else []
                n_pos = 0 if attrs else 1
                k = n_pos + len(kw)
            subs = [self.pattern(g, depth) for g in self._split(req, k)]
        return PClass(spec, subs[:n_pos], list(zip(kw, subs[n_pos:])))

    # -- statements ----------------------------------------------------------

    def match_spec(self, max_cases: int = 4) -> MatchSpec:
        if chance(self.ch, 6):
            return self._switch_spec()
        cases = []
        n = self.ch.integer(1, max_cases)
        # Sometimes every case is a mapping pattern on one key first (``match
        # event:`` dispatching on ``event["type"]``), whose value the
        # lowering may look up once per statement.
        dispatch = pick(self.ch, KEYS) if chance(self.ch, 20) else None
        if dispatch is not None:
            n = self.ch.integer(4, 6)
        for i in range(n):
            self._used = set()
            p = self.pattern(None, self.ch.integer(1, 3))
            if dispatch is not None and not (i == n - 1 and chance(self.ch, 50)):
                p = self._keyed(dispatch, p)
            elif cases and dispatch is None and chance(self.ch, 30):
                # the same outer shape as the case before: the cases share
                # their first tests (what the decision tree nests)
                p = self._sibling(cases[-1].pattern, p)
            guard = chance(self.ch, 25)
            if i < n - 1 and p.irrefutable and not guard:
                p = _refutable(p)
            cases.append(Case(p, guard))
        scope = "function" if chance(self.ch, 40) else pick(self.ch, SCOPES)
        subject = "s" if chance(self.ch, 60) else pick(self.ch, ["call", "pair"])
        leaves = scope in ("function", "quiet", "closure") and chance(self.ch, 40)
        return MatchSpec(cases, scope, subject, leaves=leaves)

    def _sibling(self, before: Pattern, fallback: Pattern) -> Pattern:
        """A pattern of ``before``'s class, length or keys with new
        sub-patterns (``fallback`` for any other kind)."""
        ch = self.ch
        if isinstance(before, PClass):
            return PClass(
                before.spec,
                [self.pattern(None, ch.integer(0, 1)) for _ in before.positional],
                [(k, self.pattern(None, ch.integer(0, 1))) for k, _ in before.keywords],
            )
        if isinstance(before, PSequence):
            items = [self.pattern(None, ch.integer(0, 1)) for _ in before.items]
            star = self._fresh() if before.star_name else None
            return PSequence(items, before.star_at, star, before.tuple_style)
        if isinstance(before, PMapping):
            items = [(k, self.pattern(None, ch.integer(0, 1))) for k, _ in before.items]
            return PMapping(items, None)
        return fallback

    def _switch_spec(self) -> MatchSpec:
        """A long run of int and str literal cases (which the lowering may
        test in two halves), sometimes a guard in it, then a few cases of any
        kind."""
        ch = self.ch
        cases = []
        for _ in range(ch.integer(12, 22)):
            alternatives = [
                PLiteral(pick(ch, SWITCH_LITERALS))
                for _ in range(1 if chance(ch, 70) else ch.integer(2, 3))
            ]
            p = alternatives[0] if len(alternatives) == 1 else POr(alternatives)
            cases.append(Case(p, chance(ch, 3)))
        for _ in range(ch.integer(0, 2)):
            self._used = set()
            cases.append(Case(self.pattern(None, ch.integer(1, 2)), chance(ch, 25)))
        cases[:-1] = [
            Case(_refutable(c.pattern), c.guard) if c.pattern.irrefutable else c
            for c in cases[:-1]
        ]
        scope = pick(ch, ["quiet", "quiet", "function", "module"])
        subject = "s" if chance(ch, 85) else "call"
        return MatchSpec(cases, scope, subject, switch=True)

    def _keyed(self, key: tuple[str, int], p: Pattern) -> Pattern:
        """``{key: <sub-pattern>, ...}``, keeping ``p``'s items under other
        keys when it is a mapping pattern itself."""
        self._used = set()
        value = self.pattern(None, self.ch.integer(0, 1))
        others = p.items if isinstance(p, PMapping) else []
        others = [(k, q) for k, q in others if _key_group(k) != key[1]]
        names = set(value.names)
        if any(names & set(q.names) for _, q in others):
            others = []
        rest = p.rest if isinstance(p, PMapping) and p.rest not in names else None
        if rest and any(rest in q.names for _, q in others):
            rest = None
        return PMapping([(key[0], value)] + others, rest)

    # -- subjects ------------------------------------------------------------

    def sequence_of(self, elems: list[str]) -> str:
        body = ", ".join(elems)
        kinds = ["list", "tuple", "deque", "hybrid"]
        if self.instrumented:
            kinds.append("logseq")
        kind = pick(self.ch, kinds)
        if kind == "hybrid":
            return f"dt.{pick(self.ch, HYBRID_SEQUENCES)}([{body}])"
        if kind == "tuple":
            return "(" + body + ("," if len(elems) == 1 else "") + ")"
        if kind == "deque":
            return f"collections.deque([{body}])"
        if kind == "logseq":
            return f"dt.LogSeq([{body}], 'seq', ('len',))"
        return f"[{body}]"

    def mapping_of(self, entries: list[tuple[str, str]]) -> str:
        body = "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"
        kinds = ["dict", "ordered", "defaultdict", "hybrid"]
        if self.instrumented:
            kinds.append("logmap")
        kind = pick(self.ch, kinds)
        if kind == "hybrid":
            return f"dt.{pick(self.ch, HYBRID_MAPPINGS)}((), {body})"
        if kind == "ordered":
            return f"collections.OrderedDict({body})"
        if kind == "defaultdict":
            return f"collections.defaultdict(list, {body})"
        if kind == "logmap":
            return f"dt.LogMap({body}, 'map', ('len',))"
        return body

    def subject(self, depth: int) -> str:
        ch = self.ch
        atoms = LITERALS + VALUES + (
            "float('nan')", "bytearray(b'a')", "'abc'", "(x for x in [1])",
            "iter([1, 2])", "range(2)", "{1, 2}", "frozenset()", "object()",
            "dt.StrSeq('ab')", "dt.StrSeq('')", "dt.StrAsSeq('ab')",
            "dt.SeqThenMap([1, 2], {'a': 1})", "dt.MapThenSeq([1], {0: 2})",
        )  # fmt: skip
        if depth <= 0 or not chance(ch, 45):
            return pick(ch, atoms)
        kind = pick(ch, ["seq", "map", "class"])
        if kind == "seq":
            return self.sequence_of(
                [self.subject(depth - 1) for _ in range(ch.integer(0, 3))]
            )
        if kind == "map":
            entries = [
                (pick(ch, KEYS)[0], self.subject(depth - 1))
                for _ in range(ch.integer(0, 3))
            ]
            return self.mapping_of(entries)
        spec = pick(ch, [c for c in CLASSES if c.build])
        return spec.build.format(
            **{a: self.subject(depth - 1) for a in spec.match_args}
        )

    def subject_for(self, spec: MatchSpec) -> str:
        """A subject built to match one of the cases (or a random one)."""
        if spec.switch and chance(self.ch, 25):
            return pick(self.ch, SWITCH_SUBJECTS)
        if chance(self.ch, 75):
            return pick(self.ch, spec.cases).pattern.witness(self)
        return self.subject(2)


def _match_lines(index: int, spec: MatchSpec, dump: str | None) -> list[str]:
    """The statement and the lines after it, indented from column 0."""
    fname = f"f{index}"
    subject, pattern = {
        "s": ("s", "{}"),
        "call": ("dt.same(s)", "{}"),
        "pair": ("dt.same(s), 0", "({}), 0"),
    }[spec.subject]
    lines = [f"match {subject}:"]
    for ci, case in enumerate(spec.cases):
        guard = ""
        if case.guard:
            args = ", ".join((repr(f"{fname}.{ci}"),) + case.pattern.names)
            guard = f" if G({args})"
        lines.append(f"    case {pattern.format(case.pattern.render())}{guard}:")
        # A comprehension in the body: its first iterable is evaluated in the
        # statement's scope, the rest in a scope of its own (even in a class).
        seen = ", ".join(case.pattern.names + ("",))
        shown = f"[dt.show(v) for v in ({seen})]"
        if dump is None:
            lines.append(f"        print('case', {ci}, {shown})")
        else:
            lines.append(f"        print('case', {ci}, {dump}, {shown})")
        if spec.leaves:
            lines.append("        return")
    lines.append("print('end')" if dump is None else f"print('end', {dump})")
    return lines


def _indented(lines: list[str], by: int) -> list[str]:
    return [" " * by + line for line in lines]


def render_function(index: int, spec: MatchSpec) -> str:
    """The statement in its scope: `def f{index}(s)` runs it on one subject,
    except at module level, where a loop runs it on each of its subjects."""
    fname = f"f{index}"
    if spec.scope == "module":
        # Not ``globals()``: a module that calls it may write any name, so
        # the lowering would know nothing of the module's classes
        # (dynamic_names); tests/shapes.py keeps the call.
        body = _match_lines(index, spec, "dt.dump_module(dt.caller_globals())")
        lines = [f"for s in each({index}):", "    try:"]
        # Names a match that raised had bound are unspecified (the language
        # reference: "do not rely on variables remaining unchanged after a
        # failed match"); each subject starts from the same state.
        # The same after the statement: a match that raised while storing
        # its captures may have stored some, and later statements show the
        # module's globals.
        names = sorted({n for case in spec.cases for n in case.pattern.names})
        reset = [" = ".join(names) + " = None"] if names else []
        lines += _indented(reset, 8) + _indented(body, 8)
        lines += ["    except Exception as e:", "        raised(e)"]
        lines += _indented(reset, 4)
        return "\n".join(lines) + "\n"
    quiet = spec.scope == "quiet"
    body = _match_lines(index, spec, None if quiet else "dt.dump_user(locals())")
    lines = [f"def {fname}(s):"]
    if spec.scope == "closure":
        lines += ["    def inner():"] + _indented(body, 8) + ["    inner()"]
    elif spec.scope == "class":
        lines += ["    class Body:"] + _indented(body, 8)
    else:
        lines += _indented(body, 4)
    return "\n".join(lines) + "\n"


@dataclasses.dataclass
class RandomProgram:
    """Match statements x subjects: every statement is run on every subject
    (`subjects[i]` are the subjects of statement i: they share most, and each
    has its own witnesses)."""

    specs: list[MatchSpec]
    subjects: list[list[str]]

    def source(self) -> str:
        parts = [RANDOM_PRELUDE, "\nSUBJECTS = []\n"]
        for subjects in self.subjects:
            parts.append(f"SUBJECTS.append({subjects!r})\n")
        for i, spec in enumerate(self.specs):
            parts.append("\n" + render_function(i, spec))
        names = ", ".join(
            "None" if spec.scope == "module" else f"f{i}"
            for i, spec in enumerate(self.specs)
        )
        parts.append(f"\nrun_all([{names}], SUBJECTS)\n")
        return "".join(parts)

    def statements_source(self) -> str:
        return "".join(render_function(i, spec) for i, spec in enumerate(self.specs))

    def only(self, i: int, j: int | None = None) -> "RandomProgram":
        subjects = self.subjects[i] if j is None else [self.subjects[i][j]]
        return RandomProgram([self.specs[i]], [subjects])

    def cases(self) -> int:
        return sum(len(s) for s in self.subjects)


def random_program(
    gen: ProgramGen, n_statements: int, n_subjects: int
) -> RandomProgram:
    specs = [gen.match_spec() for _ in range(n_statements)]
    shared = [gen.subject(2) for _ in range(n_subjects // 2)]
    subjects = [
        shared + [gen.subject_for(spec) for _ in range(n_subjects - len(shared))]
        for spec in specs
    ]
    return RandomProgram(specs, subjects)


def split_blocks(stdout: str) -> dict[str, str]:
    """Output of a RandomProgram per `f{i}/{j}` run (keyed by that tag)."""
    blocks: dict[str, list[str]] = {}
    current = "prelude"
    for line in stdout.split("\n"):
        if line.startswith("== "):
            current = line[3:]
        blocks.setdefault(current, []).append(line)
    return {k: "\n".join(v) for k, v in blocks.items()}


def outcome_differs(want: Outcome, got: Outcome) -> bool:
    return want.observable() != got.observable()


@dataclasses.dataclass
class RandomMismatch:
    target: str
    program: RandomProgram
    oracle: Outcome | None  # None until needed (a transpile failure needs none)
    actual: Outcome

    def report(self) -> str:
        text = explain_mismatch(
            self.program.source(),
            {ORACLE_VERSION: self.oracle} if self.oracle else {},
            self.target,
            self.actual,
        )
        return text or "(no difference on re-run)"


class RandomChecker:
    """Runs RandomPrograms natively and transpiled, and shrinks differences."""

    def __init__(self, oracle_exe: str, targets: Mapping[str, str]) -> None:
        self.oracle_exe = oracle_exe
        self.targets = dict(targets)  # version -> interpreter
        self.runs = 0

    def _run(self, program: RandomProgram, target: str | None) -> Outcome:
        self.runs += 1
        p = Program("random", program.source())
        if target is None:
            return run_native([p], self.oracle_exe)["random"]
        return run_transpiled([p], self.targets[target], target)["random"]

    def compile_error(self, program: RandomProgram) -> str | None:
        """The generator only makes programs CPython 3.10+ accepts; check it."""
        if sys.version_info < (3, 10):
            return None  # this interpreter cannot tell
        try:
            compile(program.source(), "<random>", "exec")
        except SyntaxError as exc:
            return f"{exc}"
        return None

    def check(
        self, program: RandomProgram, shrink: bool = True, limit: int = 1
    ) -> list[RandomMismatch]:
        """Mismatches per target; with `shrink`, up to `limit` of them per
        target, each shrunk to one statement, one subject."""
        oracle = self._run(program, None)
        found = []
        for target in self.targets:
            actual = self._run(program, target)
            if not outcome_differs(oracle, actual):
                continue
            if shrink:
                found += self.shrink(program, target, oracle, actual, limit)
            else:
                found.append(RandomMismatch(target, program, oracle, actual))
        return found

    def _transpile_problem(self, program: RandomProgram, target: str) -> str | None:
        # Only the statements: a transpiler failure depends on nothing else,
        # and the prelude would make each shrinking step several times slower.
        return transpile_source(program.statements_source(), target, "<random>")[1]

    def _still_differs(
        self, program: RandomProgram, target: str
    ) -> RandomMismatch | None:
        problem = self._transpile_problem(program, target)  # cheap: no subprocess
        if problem is not None:
            return RandomMismatch(
                target, program, None, _failed(problem, program.source())
            )
        oracle = self._run(program, None)
        actual = self._run(program, target)
        if outcome_differs(oracle, actual):
            return RandomMismatch(target, program, oracle, actual)
        return None

    def _suspects(
        self,
        program: RandomProgram,
        target: str,
        oracle: Outcome,
        actual: Outcome,
        limit: int,
    ) -> list[tuple[int, int | None]]:
        """(statement, subject) runs that likely show the difference."""
        n = len(program.specs)
        if actual.problem:
            # Transpiling failed (or the runner died): find statements that
            # do not transpile on their own, cheaply, in this process.
            indices, failing = list(range(n)), []
            while len(failing) < limit:
                k = self._bisect_transpile_failure(program, indices, target)
                if k is None:
                    break
                failing.append((k, None))
                indices.remove(k)
            if failing:
                return failing
        if oracle.problem or actual.problem or oracle.error or actual.error:
            return [(i, None) for i in range(n)]
        want, got = split_blocks(oracle.stdout), split_blocks(actual.stdout)
        tags = dict.fromkeys(list(want) + list(got))
        suspects = []
        for tag in tags:
            if want.get(tag) != got.get(tag) and tag.startswith("f") and "/" in tag:
                i, j = tag[1:].split("/")
                suspects.append((int(i), int(j)))
        return suspects

    def _bisect_transpile_failure(
        self, program: RandomProgram, indices: list[int], target: str
    ) -> int | None:
        """A statement among `indices` that fails to transpile alone."""
        part = RandomProgram([program.specs[i] for i in indices], [[]] * len(indices))
        if not self._transpile_problem(part, target):
            return None
        if len(indices) == 1:
            return indices[0]
        half = len(indices) // 2
        return self._bisect_transpile_failure(
            program, indices[:half], target
        ) or self._bisect_transpile_failure(program, indices[half:], target)

    def shrink(
        self,
        program: RandomProgram,
        target: str,
        oracle: Outcome,
        actual: Outcome,
        limit: int = 1,
    ) -> list[RandomMismatch]:
        """Up to `limit` differences, from distinct statements, each as one
        statement on one subject with the fewest cases and simplest patterns
        (the whole program if the difference needs several statements)."""
        found: list[RandomMismatch] = []
        done: set[int] = set()
        attempts = 5 * limit
        for i, j in self._suspects(program, target, oracle, actual, limit):
            if i in done or attempts <= 0 or len(found) >= limit:
                continue
            attempts -= 1
            smaller = self._still_differs(program.only(i, j), target)
            if smaller is None and j is not None:
                smaller = self._still_differs(program.only(i), target)
            if smaller is not None:
                done.add(i)
                found.append(self._finish(smaller))
        return found or [self._finish(RandomMismatch(target, program, oracle, actual))]

    def _finish(self, found: RandomMismatch) -> RandomMismatch:
        found = self._minimize(found)
        if found.oracle is None:
            found.oracle = self._run(found.program, None)
        return found

    def _minimize(self, found: RandomMismatch, budget: int = 100) -> RandomMismatch:
        """Greedily drop cases and guards and simplify patterns while the
        difference stays (each variant must still compile)."""
        if len(found.program.specs) != 1 or sys.version_info < (3, 10):
            return found
        improved = True
        while improved and budget > 0:
            improved = False
            for spec in statement_variants(found.program.specs[0]):
                candidate = RandomProgram([spec], found.program.subjects)
                if self.compile_error(candidate):
                    continue
                budget -= 1
                smaller = self._still_differs(candidate, found.target)
                if smaller is not None:
                    found, improved = smaller, True
                    break
                if budget <= 0:
                    break
        return found


def statement_variants(spec: MatchSpec) -> Iterable[MatchSpec]:
    """One-step simplifications of a match statement (may be invalid)."""
    cases = spec.cases
    for k in range(len(cases)):
        if len(cases) > 1:
            yield dataclasses.replace(spec, cases=cases[:k] + cases[k + 1 :])
    for k, case in enumerate(cases):
        if case.guard:
            yield dataclasses.replace(
                spec, cases=cases[:k] + [Case(case.pattern, False)] + cases[k + 1 :]
            )
    for k, case in enumerate(cases):
        for p in pattern_variants(case.pattern):
            yield dataclasses.replace(
                spec, cases=cases[:k] + [Case(p, case.guard)] + cases[k + 1 :]
            )


def _replaced(items: list[Any], k: int, new: Any) -> list[Any]:
    return items[:k] + [new] + items[k + 1 :]


def pattern_variants(p: Pattern) -> Iterable[Pattern]:
    """One-step simplifications of a pattern (may be invalid)."""
    if not p.names and not (isinstance(p, PCapture) and p.name is None):
        yield PCapture(None)
    if isinstance(p, (PAs, PGroup)):
        yield p.inner
        for q in pattern_variants(p.inner):
            yield PAs(q, p.name) if isinstance(p, PAs) else PGroup(q)
    elif isinstance(p, POr):
        alts = p.alternatives
        for k in range(len(alts)):
            rest = alts[:k] + alts[k + 1 :]
            yield rest[0] if len(rest) == 1 else POr(rest)
        for k, alt in enumerate(alts):
            for q in pattern_variants(alt):
                yield POr(_replaced(alts, k, q))
    elif isinstance(p, PSequence):
        if p.star_at is not None:
            yield PSequence(p.items, None, None, p.tuple_style)
        for k in range(len(p.items)):
            star_at = p.star_at
            if star_at is not None and k < star_at:
                star_at -= 1
            yield PSequence(
                p.items[:k] + p.items[k + 1 :], star_at, p.star_name, p.tuple_style
            )
        if p.tuple_style:
            yield PSequence(p.items, p.star_at, p.star_name, False)
        for k, item in enumerate(p.items):
            for q in pattern_variants(item):
                yield PSequence(
                    _replaced(p.items, k, q), p.star_at, p.star_name, p.tuple_style
                )
    elif isinstance(p, PMapping):
        if p.rest:
            yield PMapping(p.items, None)
        for k in range(len(p.items)):
            yield PMapping(p.items[:k] + p.items[k + 1 :], p.rest)
        for k, (key, value) in enumerate(p.items):
            for q in pattern_variants(value):
                yield PMapping(_replaced(p.items, k, (key, q)), p.rest)
    elif isinstance(p, PClass):
        if p.positional:
            yield PClass(p.spec, p.positional[:-1], p.keywords)
        for k in range(len(p.keywords)):
            yield PClass(p.spec, p.positional, p.keywords[:k] + p.keywords[k + 1 :])
        for k, sub in enumerate(p.positional):
            for q in pattern_variants(sub):
                yield PClass(p.spec, _replaced(p.positional, k, q), p.keywords)
        for k, (attr, sub) in enumerate(p.keywords):
            for q in pattern_variants(sub):
                yield PClass(p.spec, p.positional, _replaced(p.keywords, k, (attr, q)))
