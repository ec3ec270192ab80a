"""Module shapes and process models for the differential fuzzer (issue 19).

tests/difftest.py generates match statements inside one fixed module shape
and runs them with ``exec`` in a runner process. The bugs that break a
working program live around the statements instead: what comes before and
around the functions (docstrings, ``__future__`` imports, conditionals,
loops, class creation that runs code, annotations evaluated at ``def``
time, circular imports, doctests) and how the functions are reached
(another module, threads racing ABC registrations, cloudpickle, ``exec``
with two dicts, a spawn pool, the import hook).

:class:`ShapeGen` builds a :class:`ModuleSpec` (a module under test, ``mod``,
made of chunks around random match statements from
:class:`difftest.ProgramGen`, plus a process model); :func:`render` turns it
into real files in a temporary folder, which run as real processes
(``python app/mod.py`` or ``python app/driver.py``) natively on CPython 3.10
and, with ``app/mod.py`` transpiled, on the target. :class:`ShapeChecker`
compares what a user sees (standard output, exit status, the exception that
ended the process and, in keep-lines, its frames in the program's files)
and shrinks a difference to a small program.

Every program reaches its functions through ``fz.call(fn, i, site)``, which
runs ``fn`` on the subjects of statement ``i`` (``lib/fz.py``, generated per
program) and prints what happened, so a ``NameError`` in one place does not
hide the rest.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from difftest import (
    HELPERS,
    RANDOM_PRELUDE,
    REPO_ROOT,
    Chooser,
    MatchSpec,
    Pattern,
    PMapping,
    PSequence,
    ProgramGen,
    _match_lines,
    _without_protocol_calls,
    chance,
    pick,
    render_function,
    statement_variants,
)

#: a shaped program runs as a few real processes; a spawn pool or a
#: cloudpickle worker is slow on a busy machine, a hang must still end
RUN_TIMEOUT = 120.0

# ---------------------------------------------------------------------------
# What a program can be made of
# ---------------------------------------------------------------------------

#: how the functions are reached; "script" runs app/mod.py as __main__, the
#: rest (but cloudpickle-main and pool-main, whose mod.py is the script too)
#: run app/driver.py, which imports it
MODELS = (
    "script",
    "import",
    "threads",
    "cloudpickle-main",
    "cloudpickle-registered",
    "exec-two-dicts",
    "pool-main",
    "pool-import",
    "import-hook",
)
SCRIPT_MODELS = ("script", "cloudpickle-main", "pool-main")

#: chunks that define a function with a match, by where the ``def`` stands
PLACEMENTS = (
    "top",
    "staticmethod",
    "if-platform",
    "if-not-type-checking",
    "for-loop",
    "while-loop",
    "try",
)

#: chunks that call a function with a match while the module executes
SITES = (
    "call",
    "loop-call",
    "platform-call",
    "type-checking-else-call",
    "main-block",
    "metaclass",
    "init-subclass",
    "class-keyword",
    "set-name",
    "decorator-function",
    "decorator-dataclass",
    "class-body-call",
    "return-annotation",
    "param-annotation",
    "var-annotation",
    "class-var-annotation",
    "dunder-op",
    "circular-import",
)
#: chunks with a match statement of their own that runs at import
BODIES = ("module-match", "class-body-match", "enum-body-match")
#: chunks that call nothing, whose bodies may not run
BLOCKS = ("type-checking-block", "platform-block", "try-import", "dead-loop")
#: operators and protocols of a user object whose dunder calls a function
DUNDERS = {
    "neg": ("__neg__", "0", "NEG{n} = -OPS{n}"),
    "invert": ("__invert__", "0", "INV{n} = ~OPS{n}"),
    "add": ("__add__", "0", "ADD{n} = OPS{n} + 1"),
    "getitem-default": ("__getitem__", "0", "def dflt{n}(a=OPS{n}[5]):\n    pass"),
    "getitem": ("__getitem__", "0", "ITEM{n} = OPS{n}['k']"),
    "contains": ("__contains__", "False", "IN{n} = 3 in OPS{n}"),
    "bool": ("__bool__", "True", "if OPS{n}:\n    pass"),
    "getattr": ("__getattr__", "None", "ATTR{n} = OPS{n}.anything"),
    "call": ("__call__", "None", "CALLED{n} = OPS{n}()"),
    "iter": ("__iter__", "iter(())", "for _ in OPS{n}:\n    pass"),
    "eq": ("__eq__", "False", "EQ{n} = OPS{n} == 1"),
}
DOCSTRINGS = ("none", "one-line", "multi-line", "doctest")

# The names mod.py takes from lib/fz.py (the exec model's globals get them).
FZ_EXPORTS = (
    "Box",
    "Color",
    "FPt",
    "G",
    "NT",
    "Pt",
    "SUBJ",
    "UnaryOp",
    "V",
    "ast",
    "call",
    "dt",
    "each",
    "raised",
)
FZ_IMPORT = "from fz import " + ", ".join(FZ_EXPORTS)

# lib/sitecustomize.py: every process of a program (workers too) starts
# with fz's names, and the modules mod.py imports, as builtins, so mod.py
# may import them late or not at all: its first lines may be code that
# runs (a module without imports, a site before the imports).
SITECUSTOMIZE = """\
import builtins, enum, sys
import fz
for name in fz.EXPORTS:
    setattr(builtins, name, getattr(fz, name))
builtins.enum, builtins.sys, builtins.TYPE_CHECKING = enum, sys, False
"""

# lib/fz.py after RANDOM_PRELUDE (and SUBJECTS): runs on 3.6+, like dt.
FZ_SUPPORT = r'''
import io
import os
import sys

EXPORTS = @EXPORTS@

# A worker of a process pool runs the module's top level again when it
# imports it; its prints would interleave with the parent's. A job's own
# output comes back through call_captured. (sitecustomize imports this
# before multiprocessing knows it is in a worker: pool_run tells its
# workers through the environment.)
if os.environ.get("FZ_POOL_WORKER"):
    sys.stdout = io.StringIO()


def call(fn, i, site):
    """Run fn on each subject of statement i, printing what happened."""
    for j, expr in enumerate(SUBJECTS[i]):
        print("== f%s/%d@%s" % (i, j, site))
        try:
            fn(eval(expr))
        except Exception as e:
            raised(e)


def SUBJ(i, j, site):
    """Subject j of statement i, for a match in a class body."""
    print("== f%s/%d@%s" % (i, j, site))
    return eval(SUBJECTS[i][j])


def run_doctests(module):
    """Run the module's doctests, printing each example's outcome (not
    line numbers: the readable layout moves lines)."""
    import doctest

    write = sys.stdout.write

    class Runner(doctest.DocTestRunner):
        def report_start(self, out, test, example):
            pass

        def report_success(self, out, test, example, got):
            out("doctest %s ok\n" % test.name)

        def report_failure(self, out, test, example, got):
            out("doctest %s got:\n%s" % (test.name, got))

        def report_unexpected_exception(self, out, test, example, exc_info):
            out("doctest %s raised %s %s\n" % (test.name, exc_info[0].__name__,
                                                exc_info[1]))

    runner = Runner(verbose=False)
    tests = doctest.DocTestFinder().find(module)
    for test in sorted(tests, key=lambda t: t.name):
        runner.run(test, out=write)


class _PerThread(object):
    """sys.stdout that writes to a buffer of the current thread, if any."""

    def __init__(self, real):
        self.real = real
        self.local = __import__("threading").local()

    def write(self, text):
        buf = getattr(self.local, "buf", None)
        return (self.real if buf is None else buf).write(text)

    def flush(self):
        self.real.flush()


def run_threads(calls, probe, threads=3, rounds=30):
    """Run the calls from several threads while another registers new
    classes with Sequence and Mapping; each thread also asks `probe` (a
    match function) for the kind of each class registered so far, many
    times, and prints the first wrong answer. Printed per thread, in
    order: the same text on every run."""
    import threading
    from collections.abc import Mapping, Sequence

    sys.setswitchinterval(1e-6)
    out = _PerThread(sys.stdout)
    sys.stdout = out
    fresh = []
    done = [threading.Event() for _ in range(rounds)]
    start = threading.Barrier(threads + 1)
    buffers = [io.StringIO() for _ in range(threads)]
    # dt's classes registered at its import, asked before the race
    names = ("RegPlain", "RegPlainKid", "RegKid", "MapThenSeq", "SeqThenMap")
    known = [(cls, probe(cls([1, 2], {"a": 1}))) for cls in
             [getattr(dt, name) for name in names]]
    print("kinds before", [kind for cls, kind in known])

    def register():
        start.wait()
        for k in range(rounds):
            cls = type("Fresh%d" % k, (dt.Hybrid,), {})
            (Sequence if k % 2 == 0 else Mapping).register(cls)
            fresh.append(cls)
            done[k].set()

    def work(t):
        out.local.buf = buffers[t]
        wrong = []
        start.wait()
        for k in range(rounds):
            fn, i = calls[k % len(calls)]
            call(fn, i, "thread%d" % t)
            done[k].wait()
            # every class registered so far, again and again, while the
            # next registrations invalidate what the helper knows
            for _ in range(5):
                for index, cls in enumerate(fresh[: k + 1]):
                    kind = probe(cls([1, 2], {"a": 1}))
                    if kind != ("sequence", "mapping")[index % 2]:
                        wrong.append((k, cls.__name__, kind))
                for cls, before in known:
                    kind = probe(cls([1, 2], {"a": 1}))
                    if kind != before:
                        wrong.append((k, cls.__name__, kind))
        print("wrong kinds", wrong[:1])

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    workers.append(threading.Thread(target=register))
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    sys.stdout = out.real
    for t, buf in enumerate(buffers):
        print("-- thread", t)
        print(buf.getvalue(), end="")
    for k, cls in enumerate(fresh):
        print("probe after", k, probe(cls([1], {"a": 1})))


def call_captured(job):
    """A pool job: (module name, function expression, i, site) -> output."""
    import importlib

    modname, ref, i, site = job
    module = sys.modules.get(modname) or importlib.import_module(modname)
    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        call(eval(ref, vars(module)), i, site)
        return sys.stdout.getvalue()
    finally:
        sys.stdout = saved


def pool_run(modname, calls):
    """Run (function expression, i) calls in a spawn process pool."""
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    jobs = [(modname, ref, i, "pool") for ref, i in calls]
    sys.stdout.flush()
    os.environ["FZ_POOL_WORKER"] = "1"
    try:
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as ex:
            for text in ex.map(call_captured, jobs, timeout=100):
                print(text, end="")
    except Exception as e:
        print("pool failed", type(e).__name__)


CLOUD_WORKER = """
import pickle, sys
import fz
calls = pickle.loads(sys.stdin.buffer.read())
for fn, i in calls:
    fz.call(fn, i, "cloudpickle")
"""


def cloud_run(calls):
    """Send (function, i) calls to a fresh process with cloudpickle, which
    cannot import the module under test: the functions go by value."""
    import subprocess

    import cloudpickle

    blob = cloudpickle.dumps(list(calls))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.stdout.flush()
    proc = subprocess.Popen([sys.executable, "-c", CLOUD_WORKER], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    stdout, stderr = proc.communicate(blob)
    print(stdout.decode(), end="")
    print("worker exit", proc.returncode)
    if proc.returncode:
        print("worker error", stderr.decode().strip().splitlines()[-1])
'''

# The match statement of the threads model: which kind a class has.
PROBE_FUNCTION = """\
def kind_of(v):
    match v:
        case [*_]:
            return "sequence"
        case {}:
            return "mapping"
        case _:
            return "neither"
"""


@dataclasses.dataclass
class Chunk:
    """A part of mod.py: a def, a site that calls a def, a body with its
    own match statement, or a block that calls nothing."""

    kind: str  # "def", a SITES/BODIES/BLOCKS name, "import", "probe", ...
    #: the statement this chunk defines ("def", BODIES) or calls (SITES)
    fn: int | None = None
    #: a def's placement, a site's or block's sub-kind
    variant: str = ""
    #: the match statement of a def or body chunk
    spec: MatchSpec | None = None
    #: makes the chunk's names unique in the module
    n: int = 0
    #: a def with a doctest in its docstring; the subject index of a body
    doctest: bool = False
    subject: int = 0


@dataclasses.dataclass
class ModuleSpec:
    """A generated program: mod.py's chunks, the subjects, the model."""

    chunks: list[Chunk]
    subjects: dict[int, list[str]]
    model: str = "script"
    shebang: bool = False
    encoding: str = ""
    comment: bool = False
    docstring: str = "none"
    future: bool = False
    compact: bool = False
    tiny: bool = False

    def defs(self) -> list[Chunk]:
        return [c for c in self.chunks if c.kind == "def"]

    def statements(self) -> int:
        """The generated match statements (the threads probe not counted)."""
        return sum(1 for c in self.chunks if c.spec is not None)

    def fn_ref(self, fn: int) -> str:
        """How module-level code reaches function ``fn``."""
        for c in self.defs():
            if c.fn == fn and c.variant == "staticmethod":
                return f"K{fn}.f{fn}"
        return f"f{fn}"

    def shapes(self) -> list[str]:
        """The names this program counts under (scripts/fuzz.py --shapes)."""
        names = [f"docstring:{self.docstring}"]
        flags = (
            ("shebang", self.shebang),
            ("encoding", bool(self.encoding)),
            ("comment-header", self.comment),
            ("future-annotations", self.future),
            ("compact", self.compact),
            ("tiny", self.tiny),
        )
        names += [name for name, on in flags if on]
        first = self.chunks[0]
        if not self.header_lines() and first.kind == "def":
            on_line_1 = first.variant == "staticmethod"
            names.append("class-on-line-1" if on_line_1 else "def-on-line-1")
        for c in self.chunks:
            if c.kind == "def":
                names.append(f"def:{c.variant}")
                if c.doctest:
                    names.append("doctest:function")
                if c.spec is not None and c.spec.scope != "function":
                    names.append(f"def-scope:{c.spec.scope}")
            elif c.kind == "import":
                names.append(f"import:{c.variant}")
            elif c.kind in SITES + BODIES + BLOCKS:
                names.append(c.kind + (f":{c.variant}" if c.variant else ""))
        if self.docstring == "doctest":
            names.append("doctest:module")
        if self.import_position() > 0:
            names.append("code-before-imports")
        return sorted(set(names))

    def import_position(self) -> int:
        return next(i for i, c in enumerate(self.chunks) if c.kind == "import")

    def header_lines(self) -> list[str]:
        lines = []
        if self.shebang:
            lines.append("#!/usr/bin/env python3")
        if self.encoding:
            lines.append(self.encoding)
        if self.comment:
            lines += [
                "# Copyright (c) the fuzz authors.",
                "# SPDX-License-Identifier: MIT",
            ]
        if self.docstring != "none":
            if lines and not self.compact:
                lines.append("")
            lines += self._docstring_lines()
        if self.future:
            lines.append("from __future__ import annotations")
        return lines

    def _docstring_lines(self) -> list[str]:
        if self.docstring == "one-line":
            return ['"""Module under test."""']
        if self.docstring == "multi-line":
            return ['"""Module under test.', "", "It has several lines.", '"""']
        first = self.defs()[0].fn or 0
        example = f">>> call({self.fn_ref(first)}, {first}, 'moddoc')"
        return ['"""Module under test.', "", example, '"""']


# ---------------------------------------------------------------------------
# Rendering: a ModuleSpec -> files
# ---------------------------------------------------------------------------


def _indent(lines: Iterable[str], by: int = 4) -> list[str]:
    return [(" " * by + line) if line else line for line in lines]


def _function_lines(spec: ModuleSpec, chunk: Chunk) -> list[str]:
    """``def f{fn}(s):`` with its match statement (and a doctest)."""
    assert chunk.spec is not None and chunk.fn is not None
    lines = render_function(chunk.fn, chunk.spec).rstrip("\n").split("\n")
    if chunk.doctest:
        example = f">>> call({spec.fn_ref(chunk.fn)}, {chunk.fn}, 'fndoc')"
        lines[1:1] = _indent(['"""Run on the subjects.', "", example, '"""'])
    return lines


def _one_line_cases(lines: list[str]) -> list[str]:
    """_match_lines() with each case body on its case's line, no last line."""
    out = [lines[0]]
    for line in lines[1:-1]:
        if line.startswith("    case "):
            out.append(line)
        else:
            out[-1] += " " + line.strip()
    return out


def _tiny_lines(chunk: Chunk) -> list[str]:
    """A match of a module of 1-7 lines: in ``def f0(s):`` or at module
    level over the subjects."""
    assert chunk.spec is not None and chunk.fn is not None
    dump = None if chunk.kind == "def" else "dt.dump_module(globals())"
    lines = _one_line_cases(_match_lines(chunk.fn, chunk.spec, dump))
    if chunk.kind == "def":
        return [f"def f{chunk.fn}(s):"] + _indent(lines)
    return [f"for s in each({chunk.fn}):"] + _indent(lines)


def _def_lines(spec: ModuleSpec, chunk: Chunk) -> list[str]:
    if chunk.variant == "tiny":
        return _tiny_lines(chunk)
    body = _function_lines(spec, chunk)
    name = f"f{chunk.fn}"
    placement = chunk.variant
    if placement == "staticmethod":
        return [f"class K{chunk.fn}:", "    @staticmethod"] + _indent(body)
    if placement == "if-platform":
        return ['if sys.platform != "win32":'] + _indent(body)
    if placement == "if-not-type-checking":
        return ["if TYPE_CHECKING:", f"    {name} = None", "else:"] + _indent(body)
    if placement == "for-loop":
        return ["for _ in range(1):"] + _indent(body)
    if placement == "while-loop":
        return ["while True:"] + _indent(body) + ["    break"]
    if placement == "try":
        return ["try:"] + _indent(body) + ["except ImportError:", "    raise"]
    return body


def _site_lines(spec: ModuleSpec, chunk: Chunk) -> list[str]:
    """A site: code that runs at import and calls function ``chunk.fn``."""
    n, kind = chunk.n, chunk.kind
    call = f"call({spec.fn_ref(chunk.fn or 0)}, {chunk.fn}, '{kind}{n}')"
    if kind == "call":
        return [call]
    if kind == "loop-call":
        if chunk.variant == "while":
            return [f"N{n} = 0", f"while N{n} < 1:", f"    {call}", f"    N{n} += 1"]
        return [f"for _ in range({chunk.variant[-1]}):", f"    {call}"]
    if kind == "platform-call":
        test = "==" if chunk.variant == "dead" else "!="
        return [f'if sys.platform {test} "win32":', f"    {call}"]
    if kind == "type-checking-else-call":
        return ["if TYPE_CHECKING:", "    pass", "else:", f"    {call}"]
    if kind == "main-block":
        return ['if __name__ == "__main__":', f"    {call}"]
    if kind == "metaclass":
        return [
            f"class Meta{n}(type):",
            "    def __new__(mcs, name, bases, ns, **kw):",
            f"        {call}",
            "        return super().__new__(mcs, name, bases, ns)",
            f"class UsesMeta{n}(metaclass=Meta{n}):",
            "    pass",
        ]
    if kind in ("init-subclass", "class-keyword"):
        hook = call if kind == "init-subclass" else "pass"
        head = f"class Kid{n}(Base{n}):"
        if kind == "class-keyword":
            head = f"class Kid{n}(Base{n}, tag={call}):"
        return [
            f"class Base{n}:",
            "    def __init_subclass__(cls, **kw):",
            "        super().__init_subclass__()",
            f"        {hook}",
            head,
            "    pass",
        ]
    if kind == "set-name":
        return [
            f"class Desc{n}:",
            "    def __set_name__(self, owner, name):",
            f"        {call}",
            f"class Owner{n}:",
            f"    attr = Desc{n}()",
        ]
    if kind == "decorator-function":
        return [
            f"def deco{n}(fn):",
            f"    {call}",
            "    return fn",
            f"@deco{n}",
            f"def decorated{n}():",
            "    pass",
        ]
    if kind == "decorator-dataclass":
        # A decorator merely *named* dataclass runs code like any other.
        return [
            "def dataclass(cls=None, **kw):",
            f"    {call}",
            "    return cls",
            "@dataclass",
            f"class Data{n}:",
            "    x: int = 0",
        ]
    if kind == "class-body-call":
        return [f"class Body{n}:", f"    X = {call}"]
    if kind == "return-annotation":
        return [f"def ann{n}() -> {call}:", "    pass"]
    if kind == "param-annotation":
        return [f"def par{n}(a: {call} = None):", "    pass"]
    if kind == "var-annotation":
        value = " = 1" if chunk.variant == "value" else ""
        return [f"ANN{n}: {call}{value}"]
    if kind == "class-var-annotation":
        return [f"class Ann{n}:", f"    x: {call} = 1"]
    if kind == "dunder-op":
        method, result, use = DUNDERS[chunk.variant]
        params = {
            "__add__": "self, other",
            "__getitem__": "self, key",
            "__contains__": "self, item",
            "__getattr__": "self, name",
            "__eq__": "self, other",
        }.get(method, "self")
        lines = [f"class Ops{n}:", f"    def {method}({params}):"]
        lines += [f"        {call}", f"        return {result}"]
        if method == "__eq__":
            lines.append("    __hash__ = object.__hash__")
        lines.append(f"OPS{n} = Ops{n}()")
        return lines + use.format(n=n).split("\n")
    if kind == "circular-import":
        return [f"import sib{n}"]
    raise ValueError(kind)


def _body_lines(chunk: Chunk) -> list[str]:
    """A match statement that runs in the module or a class body at import."""
    assert chunk.spec is not None and chunk.fn is not None
    fn, n, j = chunk.fn, chunk.n, chunk.subject
    if chunk.variant == "tiny":
        return _tiny_lines(chunk)
    if chunk.kind == "module-match":
        return render_function(fn, chunk.spec).rstrip("\n").split("\n")
    subject = f"s = SUBJ({fn}, {j}, '{chunk.kind}{n}')"
    if chunk.kind == "class-body-match":
        body = _match_lines(fn, chunk.spec, "dt.dump_user(locals())")
        head = f"class CB{n}:"
        after: list[str] = []
    else:
        # The _EnumDict holds _generate_next_value_: no dumps of locals().
        body = _match_lines(fn, chunk.spec, None)
        head = f"class E{n}(enum.Enum):"
        shown = f"dt.show([(m.name, m.value) for m in E{n}])"
        after = ["else:", f"    print('members', {shown})"]
    inner = [head] + _indent(["A = 1", subject] if "enum" in chunk.kind else [subject])
    inner += _indent(body)
    return (
        ["try:"] + _indent(inner) + ["except Exception as e:", "    raised(e)"] + after
    )


def _block_lines(chunk: Chunk) -> list[str]:
    """Code that calls nothing; bodies that may never run."""
    n = chunk.n
    if chunk.kind == "type-checking-block":
        return ["if TYPE_CHECKING:", f"    from fz import Pt as PT{n}"]
    if chunk.kind == "platform-block":
        return ['if sys.platform == "win32":', f"    import winreg as WINREG{n}"]
    if chunk.kind == "try-import":
        return [
            "try:",
            f"    import fz_absent_{n}",
            "except ImportError:",
            f"    fz_absent_{n} = None",
        ]
    if chunk.variant == "while":
        return ["while False:", "    pass"]
    return ["for _ in ():", "    pass"]


def _import_lines(chunk: Chunk) -> list[str]:
    std = ["import enum, sys", "from typing import TYPE_CHECKING"]
    if chunk.variant == "try":
        return std + ["try:", f"    {FZ_IMPORT}", "except ImportError:", "    raise"]
    if chunk.variant == "tiny":
        return [FZ_IMPORT]
    if chunk.variant == "none":
        return []  # the names are builtins (SITECUSTOMIZE)
    return std + [FZ_IMPORT]


def _final_main(spec: ModuleSpec) -> list[str]:
    """The closing ``if __name__ == "__main__":`` of the script models."""
    calls = [(spec.fn_ref(c.fn or 0), c.fn) for c in spec.defs()]
    if spec.model == "script":
        body = [f"call({ref}, {fn}, 'main')" for ref, fn in calls]
        if _has_doctests(spec):
            body.append("fz_doctests = __import__('fz').run_doctests")
            body.append("fz_doctests(sys.modules[__name__])")
    elif spec.model == "cloudpickle-main":
        pairs = ", ".join(f"({ref}, {fn})" for ref, fn in calls)
        body = [f"__import__('fz').cloud_run([{pairs}])"]
    else:
        pairs = ", ".join(f"({ref!r}, {fn})" for ref, fn in calls)
        body = [f"__import__('fz').pool_run('__main__', [{pairs}])"]
    return ['if __name__ == "__main__":'] + _indent(body or ["pass"])


def _has_doctests(spec: ModuleSpec) -> bool:
    return spec.docstring == "doctest" or any(c.doctest for c in spec.defs())


def _chunk_lines(spec: ModuleSpec, chunk: Chunk) -> list[str]:
    if chunk.kind == "def":
        return _def_lines(spec, chunk)
    if chunk.kind == "import":
        return _import_lines(chunk)
    if chunk.kind == "probe":
        return PROBE_FUNCTION.rstrip("\n").split("\n")
    if chunk.kind in BODIES:
        return _body_lines(chunk)
    if chunk.kind in BLOCKS:
        return _block_lines(chunk)
    return _site_lines(spec, chunk)


def _starts_definition(lines: list[str]) -> bool:
    return lines[0].startswith(("def ", "class ", "@"))


def module_source(spec: ModuleSpec) -> str:
    """mod.py: header, chunks (blank lines between them unless compact),
    and for the script models the closing main block."""
    out = spec.header_lines()
    parts = [_chunk_lines(spec, c) for c in spec.chunks]
    parts = [lines for lines in parts if lines]
    if spec.model in SCRIPT_MODELS and not spec.tiny:
        parts.append(_final_main(spec))
    for lines in parts:
        if out and not spec.compact:
            out += [""] * (2 if _starts_definition(lines) else 1)
        out += lines
    return "\n".join(out) + "\n"


def _sibling_source(spec: ModuleSpec, chunk: Chunk) -> str:
    """sib{n}.py: imports the module under test back and calls into it
    while that module is still executing (a circular import)."""
    name = "__main__" if spec.model in SCRIPT_MODELS else "mod"
    ref = spec.fn_ref(chunk.fn or 0)
    return (
        f"import {name} as m\n"
        "from fz import call\n"
        f"call(m.{ref}, {chunk.fn}, 'circular{chunk.n}')\n"
    )


def _driver_source(spec: ModuleSpec) -> str:
    """app/driver.py for the models that import the module under test."""
    calls = [(spec.fn_ref(c.fn or 0), c.fn) for c in spec.defs()]
    head = ["import os", "import sys", "import fz"]
    if spec.model == "import-hook":
        # Only the target run installs the hook; natively mod is imported as is.
        head += [
            'if os.environ.get("FZ_HOOK_TARGET"):',
            "    from spam_transpile.integrations.import_hook import "
            "install_import_hook",
            "    install_import_hook([os.path.dirname(os.path.abspath(__file__))],",
            '                        target=os.environ["FZ_HOOK_TARGET"], cache=False)',
        ]
    if spec.model == "exec-two-dicts":
        return "\n".join(head + _exec_driver(calls)) + "\n"
    if spec.model == "pool-import":
        pairs = ", ".join(f"({ref!r}, {fn})" for ref, fn in calls)
        body = ['if __name__ == "__main__":', f"    fz.pool_run('mod', [{pairs}])"]
        return "\n".join(head + ["import mod"] + body) + "\n"
    body = ["import mod"]
    pairs = ", ".join(f"(mod.{ref}, {fn})" for ref, fn in calls)
    if spec.model == "threads":
        body.append(f"fz.run_threads([{pairs}], mod.kind_of)")
    elif spec.model == "cloudpickle-registered":
        body += ["import cloudpickle", "cloudpickle.register_pickle_by_value(mod)"]
        body.append(f"fz.cloud_run([{pairs}])")
    else:
        body += [f"fz.call(mod.{ref}, {fn}, 'driver')" for ref, fn in calls]
        if _has_doctests(spec):
            body.append("fz.run_doctests(mod)")
    return "\n".join(head + body) + "\n"


def _exec_driver(calls: list[tuple[str, int | None]]) -> list[str]:
    """exec() of mod.py's text with separate globals and locals."""
    lines = [
        'path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mod.py")',
        'with open(path, "rb") as f:',
        "    code = compile(f.read(), path, 'exec')",
        "g = {'__name__': 'execmod', '__builtins__': __builtins__}",
        f"g.update((n, getattr(fz, n)) for n in {FZ_EXPORTS!r})",
        "l = {}",
        "try:",
        "    exec(code, g, l)",
        "except Exception as e:",
        "    fz.raised(e)",
    ]
    for ref, fn in calls:
        lines += [
            "try:",
            f"    fn = eval({ref!r}, g, l)",
            "except Exception as e:",
            "    fz.raised(e)",
            "else:",
            f"    fz.call(fn, {fn}, 'exec')",
        ]
    return lines


@dataclasses.dataclass(frozen=True)
class Rendered:
    """The files of a program (relative path -> text) and how to start it."""

    files: tuple[tuple[str, str], ...]
    entry: str  # the script, relative to the program's folder
    model: str

    def text(self, path: str) -> str:
        return dict(self.files)[path]


def fz_source(spec: ModuleSpec) -> str:
    subjects = "".join(f"SUBJECTS[{k}] = {v!r}\n" for k, v in spec.subjects.items())
    support = FZ_SUPPORT.replace("@EXPORTS@", repr(FZ_EXPORTS))
    return RANDOM_PRELUDE + "\nSUBJECTS = {}\n" + subjects + support


def render(spec: ModuleSpec) -> Rendered:
    files = {
        "lib/dt.py": HELPERS,
        "lib/fz.py": fz_source(spec),
        "lib/sitecustomize.py": SITECUSTOMIZE,
        "app/mod.py": module_source(spec),
    }
    for c in spec.chunks:
        if c.kind == "circular-import":
            files[f"app/sib{c.n}.py"] = _sibling_source(spec, c)
    entry = "app/mod.py"
    if spec.model not in SCRIPT_MODELS:
        files["app/driver.py"] = _driver_source(spec)
        entry = "app/driver.py"
    return Rendered(tuple(sorted(files.items())), entry, spec.model)


# ---------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------

#: the sub-kinds of a site (a forced program has one of each)
SITE_VARIANTS = {
    "loop-call": ("range0", "range1", "range2", "while"),
    "platform-call": ("runs", "dead"),
    "var-annotation": ("value", "bare"),
    "dunder-op": tuple(sorted(DUNDERS)),
}

#: every shape ShapeGen.program(only=...) can force, one per test
FORCED_SHAPES = (
    ("header-lines", "docstring:multi-line", "future-annotations", "compact")
    + ("doctest:module", "doctest:function", "def-on-line-1", "class-on-line-1")
    + ("code-before-imports", "import:try", "import:none", "tiny")
    + tuple(f"def:{p}" for p in PLACEMENTS if p != "top")
    + SITES
    + BODIES
    + BLOCKS
)

#: models a tiny module (no closing main block, no probe) can run under
TINY_MODELS = (
    "script",
    "import",
    "exec-two-dicts",
    "cloudpickle-registered",
    "pool-import",
    "import-hook",
)
ENCODINGS = (
    "# -*- coding: utf-8 -*-",
    "# coding: latin-1",
    "# vim: set fileencoding=utf-8 :",
)


#: header shapes that are a flag of ModuleSpec
HEADER_FLAGS = {
    "shebang": "shebang",
    "comment-header": "comment",
    "future-annotations": "future",
    "compact": "compact",
}


class ShapeGen:
    """Random module shapes around random match statements.

    ``only``: a shape (a SITES, BODIES or BLOCKS name, a placement as
    "def:NAME", or a header feature) or a model to force, with every other
    random shape off: the program is then a plain module with that one
    shape, for the per-shape tests.
    """

    def __init__(
        self,
        ch: Chooser,
        *,
        instrumented: bool = True,
        models: Sequence[str] = MODELS,
        subjects: int = 4,
        max_defs: int = 6,
    ) -> None:
        self.ch = ch
        self.max_defs = max_defs
        self.gen = ProgramGen(ch, instrumented=instrumented)
        self.models = tuple(models)
        self.n_subjects = subjects
        self._next_id = 0
        self._next_n = 0

    # -- pieces ----------------------------------------------------------------

    def _spec(self, scope: str | None = None) -> MatchSpec:
        # Bodies that return would not fit the class and module bodies, nor
        # one-line cases, that shapes put statements in.
        spec = dataclasses.replace(self.gen.match_spec(), leaves=False)
        if scope is not None and spec.scope != scope:
            spec = dataclasses.replace(spec, scope=scope)
        elif spec.scope == "module":
            spec = dataclasses.replace(spec, scope="function")
        return spec

    def _ids(self) -> tuple[int, int]:
        self._next_id += 1
        self._next_n += 1
        return self._next_id - 1, self._next_n

    def _subjects(self, spec: MatchSpec) -> list[str]:
        shared = [self.gen.subject(2) for _ in range(self.n_subjects // 2)]
        rest = self.n_subjects - len(shared)
        return shared + [self.gen.subject_for(spec) for _ in range(rest)]

    def def_chunk(self, placement: str, doctest: bool = False) -> Chunk:
        fn, n = self._ids()
        return Chunk("def", fn, placement, self._spec(), n, doctest)

    def _structural_spec(self) -> MatchSpec:
        """A statement with a sequence or mapping pattern (whose kind test
        needs the helper for most types), the first of several drawn."""
        for _ in range(50):
            spec = self._spec()
            if any(_structural(case.pattern) for case in spec.cases):
                return spec
        return spec

    def body_chunk(self, kind: str) -> Chunk:
        fn, n = self._ids()
        scope = "module" if kind == "module-match" else "function"
        j = self.ch.integer(0, self.n_subjects - 1)
        return Chunk(kind, fn, "", self._spec(scope), n, subject=j)

    def site_chunk(self, kind: str, fn: int) -> Chunk:
        self._next_n += 1
        return Chunk(kind, fn, self._site_variant(kind), n=self._next_n)

    def block_chunk(self, kind: str) -> Chunk:
        self._next_n += 1
        variant = pick(self.ch, ["for", "while"]) if kind == "dead-loop" else ""
        return Chunk(kind, None, variant, n=self._next_n)

    def _site_variant(self, kind: str) -> str:
        return pick(self.ch, SITE_VARIANTS[kind]) if kind in SITE_VARIANTS else ""

    def _placement(self) -> str:
        return "top" if chance(self.ch, 50) else pick(self.ch, PLACEMENTS)

    # -- programs --------------------------------------------------------------

    def program(self, only: str | None = None) -> ModuleSpec:
        """A random program, or (``only``) a plain one with that shape."""
        self._next_id = self._next_n = 0
        if only is not None:
            spec = self._forced(only)
        elif chance(self.ch, 5):
            spec = self._tiny(pick(self.ch, TINY_MODELS))
        else:
            spec = self._random()
        self._finish(spec)
        return spec

    def _finish(self, spec: ModuleSpec) -> None:
        if spec.model == "threads" and not any(c.kind == "probe" for c in spec.chunks):
            spec.chunks.append(Chunk("probe"))
        for c in spec.chunks:
            if c.spec is not None and c.fn is not None:
                spec.subjects[c.fn] = self._subjects(c.spec)

    def _random(self) -> ModuleSpec:
        ch = self.ch
        models = [m for m in self.models if m in MODELS]
        model = "script" if chance(ch, 25) and "script" in models else pick(ch, models)
        spec = ModuleSpec([], {}, model)
        line_1 = chance(ch, 12)
        if not line_1:
            self._random_header(spec)
        spec.compact = chance(ch, 25)
        if line_1:
            spec.chunks.append(self.def_chunk(pick(ch, ["top", "staticmethod"])))
        defined = [c.fn for c in spec.chunks]
        n_defs = ch.integer(1, self.max_defs) - len(defined)
        for _ in range(ch.integer(1, 9) + max(n_defs, 0)):
            roll = ch.integer(0, 99)
            if n_defs > 0 and (roll < 40 or not defined):
                doctest = chance(ch, 8)
                spec.chunks.append(self.def_chunk(self._placement(), doctest))
                defined.append(spec.chunks[-1].fn)
                n_defs -= 1
            elif roll < 75 and defined:
                kind = pick(ch, SITES)
                spec.chunks.append(self.site_chunk(kind, pick(ch, defined)))
            elif roll < 88:
                spec.chunks.append(self.body_chunk(pick(ch, BODIES)))
            else:
                spec.chunks.append(self.block_chunk(pick(ch, BLOCKS)))
        if not spec.defs():
            spec.chunks.append(self.def_chunk("top"))
        spec.chunks.insert(*self._import_chunk(len(spec.chunks), line_1))
        return spec

    def _import_chunk(self, chunks: int, line_1: bool) -> tuple[int, Chunk]:
        """Where mod.py imports its names, and how: first (as most modules
        do), after some code, or not at all (they are builtins here)."""
        ch = self.ch
        style = pick(ch, ["try", "none", "late"]) if chance(ch, 40) else "simple"
        if style == "late":
            return ch.integer(1 if line_1 else 0, chunks), Chunk(
                "import", variant="simple"
            )
        return int(line_1), Chunk("import", variant=style)

    def _random_header(self, spec: ModuleSpec) -> None:
        ch = self.ch
        spec.shebang = chance(ch, 20)
        spec.encoding = pick(ch, ENCODINGS) if chance(ch, 20) else ""
        spec.comment = chance(ch, 25)
        spec.docstring = pick(ch, DOCSTRINGS)
        spec.future = chance(ch, 30)

    def _tiny(self, model: str) -> ModuleSpec:
        """A module of 1-7 lines: the import, one match (in a def or at
        module level) with one-line case bodies, and a call."""
        spec = ModuleSpec([Chunk("import", variant="tiny")], {}, model, tiny=True)
        spec.compact = True
        if model == "script" and chance(self.ch, 40):
            chunk = self.body_chunk("module-match")
            chunk.spec = _short(chunk.spec, 3)
            chunk.variant = "tiny"
            spec.chunks.append(chunk)
            return spec
        chunk = self.def_chunk("tiny")
        chunk.spec = dataclasses.replace(_short(chunk.spec, 3), scope="function")
        spec.chunks += [chunk, self.site_chunk("call", chunk.fn or 0)]
        return spec

    def _forced(self, only: str) -> ModuleSpec:
        """A plain module (the import, one def, a call) with the shape or
        model ``only`` added; a site with variants gets one of each.

        A site, body, block or placement comes without the import line
        (the names are builtins): the def and the shape are the module's
        first code, nothing before them binds the helper by chance."""
        model = only if only in MODELS else "script"
        if only == "tiny":
            return self._tiny("script")
        first_code = only in SITES + BODIES + BLOCKS or only.startswith("def:")
        imports = "none" if first_code else "simple"
        spec = ModuleSpec([Chunk("import", variant=imports)], {}, model)
        placement = only[4:] if only.startswith("def:") else "top"
        first = self.def_chunk(placement, doctest=only == "doctest:function")
        first.spec = self._structural_spec()
        spec.chunks.append(first)
        fn = first.fn or 0
        if only in SITES:
            for variant in SITE_VARIANTS.get(only, ("",)):
                spec.chunks.append(self.site_chunk(only, fn))
                spec.chunks[-1].variant = variant
        elif only in BODIES:
            spec.chunks.append(self.body_chunk(only))
        elif only in BLOCKS:
            spec.chunks.insert(1, self.block_chunk(only))
        elif only in ("def-on-line-1", "class-on-line-1", "code-before-imports"):
            first.variant = "staticmethod" if only == "class-on-line-1" else "top"
            spec.chunks.reverse()
            if only == "code-before-imports":
                spec.docstring = "one-line"
        elif only.startswith("import:"):
            spec.chunks[0].variant = only.split(":")[1]
        elif not only.startswith("def:"):
            self._forced_header(spec, only)
        spec.chunks.append(self.site_chunk("call", fn))
        return spec

    def _forced_header(self, spec: ModuleSpec, only: str) -> None:
        if only.startswith("docstring:"):
            spec.docstring = only.split(":", 1)[1]
        elif only == "doctest:module":
            spec.docstring = "doctest"
        elif only in HEADER_FLAGS:
            setattr(spec, HEADER_FLAGS[only], True)
        elif only == "header-lines":
            spec.shebang = spec.comment = True
            spec.encoding = ENCODINGS[0]
        elif only not in MODELS and only != "doctest:function":
            raise ValueError(f"unknown shape {only!r}")


def _structural(p: Pattern) -> bool:
    if isinstance(p, (PSequence, PMapping)):
        return True
    return any(
        _structural(q) for q in vars(p).values() if isinstance(q, Pattern)
    ) or any(
        _structural(q)
        for items in vars(p).values()
        if isinstance(items, list)
        for q in (i[1] if isinstance(i, tuple) else i for i in items)
        if isinstance(q, Pattern)
    )


def _short(spec: MatchSpec | None, cases: int) -> MatchSpec:
    """At most ``cases`` cases, the last one kept (the statement stays valid:
    only the last case may be irrefutable)."""
    assert spec is not None
    if len(spec.cases) <= cases:
        return spec
    return dataclasses.replace(spec, cases=spec.cases[: cases - 1] + spec.cases[-1:])


# ---------------------------------------------------------------------------
# Packages a model needs on an interpreter (cloudpickle, the tool itself)
# ---------------------------------------------------------------------------

#: where the packages are installed (pip --target), one folder per
#: interpreter version and set of requirements
DEPS_ENV = "SPAM_TRANSPILE_TEST_DEPS"


def _deps_root() -> Path:
    return Path(os.environ.get(DEPS_ENV) or Path(tempfile.gettempdir()) / "spam-deps")


def _probe(exe: str, code: str, path: Sequence[str]) -> bool:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    try:
        proc = subprocess.run(
            [exe, "-c", code], env=env, capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


_PACKAGES: dict[tuple[str, tuple[str, ...]], tuple[list[str] | None, str]] = {}


def packages_for(
    exe: str, requirements: tuple[str, ...], probe: str, path: Sequence[str] = ()
) -> tuple[list[str] | None, str]:
    """(folders to add to PYTHONPATH, "") once ``probe`` (an import) runs on
    ``exe``; the requirements are installed with the interpreter's own pip
    into a folder of their own if needed. (None, why) if they cannot be had."""
    key = (exe, requirements)
    if key not in _PACKAGES:
        _PACKAGES[key] = _install(exe, requirements, probe, list(path))
    return _PACKAGES[key]


def _install(
    exe: str, requirements: tuple[str, ...], probe: str, path: list[str]
) -> tuple[list[str] | None, str]:
    if _probe(exe, probe, path):
        return path, ""
    digest = hashlib.sha256(f"{exe}\n{requirements}".encode()).hexdigest()[:12]
    folder = _deps_root() / digest
    if _probe(exe, probe, path + [str(folder)]):
        return path + [str(folder)], ""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{digest}-", dir=folder.parent))
    command = [exe, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--target", str(staging), *requirements]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        return None, f"pip install {' '.join(requirements)} on {exe}: {exc}"
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        return None, f"pip install {' '.join(requirements)} on {exe} failed: {tail}"
    shutil.rmtree(folder, ignore_errors=True)
    try:
        staging.rename(folder)  # another process may have won: theirs is as good
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    if not _probe(exe, probe, path + [str(folder)]):
        return None, f"{probe!r} still fails on {exe} after installing {requirements}"
    return path + [str(folder)], ""


def _tool_requirements() -> tuple[str, ...]:
    try:
        import tomllib
    except ImportError:  # the tool runs on 3.9 and 3.10 too
        import tomli as tomllib  # type: ignore[no-redef]
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    return tuple(data["project"]["dependencies"])


def model_path(model: str, exe: str, hooked: bool) -> tuple[list[str] | None, str]:
    """Extra PYTHONPATH entries ``model`` needs on ``exe`` (``hooked``: the
    import hook runs there), or (None, why they cannot be had)."""
    if model.startswith("cloudpickle"):
        return packages_for(exe, ("cloudpickle",), "import cloudpickle")
    if model == "import-hook" and hooked:
        probe = "import spam_transpile.integrations.import_hook"
        return packages_for(exe, _tool_requirements(), probe, [str(REPO_ROOT)])
    return [], ""


# ---------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------

_FRAME = re.compile(r'^  File "<dir>/(app/\w+\.py)", line (\d+), in (\S+)$')


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one run showed: standard output, exit status, the exception
    that ended the process (the last line of stderr) and its frames in
    the program's own files."""

    stdout: str
    returncode: int
    error: str
    frames: tuple[tuple[str, int, str], ...]
    problem: str | None = None
    #: app/mod.py as it ran (the transpiled text on a target)
    executed: str = ""

    def observable(self, layout: str) -> dict[str, object]:
        # Worker processes write to stderr on their own; what ended the
        # process counts only when it failed. Readable moves lines.
        failed = self.returncode != 0
        return {
            "problem": self.problem,
            # as difftest: PEP 634 leaves protocol calls unspecified
            "stdout": _without_protocol_calls(self.stdout),
            "returncode": self.returncode,
            "error": self.error if failed else "",
            "frames": self.frames if failed and layout == "keep-lines" else (),
        }


def _normalize(text: str, folder: str) -> str:
    for name in {folder, os.path.realpath(folder)}:
        text = text.replace(name, "<dir>")
    text = re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", text)
    # `from __future__ import annotations` binds a global whose repr holds
    # the interpreter's version (a module-level match dumps the globals)
    return re.sub(r"_Feature\(\([^)]*\), \([^)]*\), \d+\)", "_Feature(...)", text)


def _last_traceback_frames(stderr: str) -> tuple[tuple[str, int, str], ...]:
    block = stderr.rsplit("Traceback (most recent call last):", 1)[-1]
    frames = []
    for line in block.splitlines():
        m = _FRAME.match(line)
        if m:
            frames.append((m.group(1), int(m.group(2)), m.group(3)))
    return tuple(frames)


def transpile_module(text: str, target: str, layout: str) -> tuple[str, str | None]:
    """(lowered text, None) or (text, why it could not be lowered)."""
    try:
        from spam_transpile import transpile
    except Exception as exc:
        return text, f"cannot import spam_transpile: {type(exc).__name__}: {exc}"
    try:
        return (
            transpile(text, target=target, filename="app/mod.py", layout=layout),
            None,
        )
    except Exception as exc:
        return text, f"transpile() raised {type(exc).__name__}: {exc}"


def run_program(
    program: Rendered,
    exe: str,
    *,
    target: str | None,
    layout: str,
    path: Sequence[str] = (),
) -> Outcome:
    """Run the program natively (``target`` None) or with app/mod.py lowered
    for ``target`` (through the import hook for that model)."""
    files = dict(program.files)
    hooked = program.model == "import-hook" and target is not None
    if target is not None and not hooked:
        lowered, problem = transpile_module(files["app/mod.py"], target, layout)
        if problem is not None:
            return Outcome("", 0, "", (), problem, lowered)
        files["app/mod.py"] = lowered
    folder = tempfile.mkdtemp(prefix="shape-")
    try:
        for name, text in files.items():
            dest = Path(folder, name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        hook = target if hooked else None
        return _run_in(folder, program, exe, hook, path, layout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_in(
    folder: str,
    program: Rendered,
    exe: str,
    hook_target: str | None,
    path: Sequence[str],
    layout: str = "keep-lines",
) -> Outcome:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(folder, "lib"), *path])
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # As difftest.use_layout("readable"): dumps of locals leave out the
    # readable layout's own names (which stay locals, as in hand-written
    # code). Keep-lines names all of its own ``_spam...``, which the dumps
    # leave out anyway, and the generated names are single letters: one
    # native run serves both layouts.
    env["DIFFTEST_HIDDEN_NAMES"] = r"subject|size|\w+_\w+"
    if layout == "readable":
        env["DIFFTEST_ABC_KINDS"] = "1"  # difftest.use_layout
    if hook_target:
        env["FZ_HOOK_TARGET"] = hook_target
    executed = dict(program.files)["app/mod.py"] if hook_target else ""
    try:
        proc = subprocess.run(
            [exe, program.entry],
            cwd=folder,
            env=env,
            capture_output=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return Outcome("", -1, "", (), f"timed out after {RUN_TIMEOUT} s", executed)
    stdout = _normalize(proc.stdout.decode("utf-8", "replace"), folder)
    stderr = _normalize(proc.stderr.decode("utf-8", "replace"), folder)
    lines = stderr.strip().splitlines()
    frames = _last_traceback_frames(stderr)
    if not executed:
        executed = Path(folder, "app", "mod.py").read_text(encoding="utf-8")
    return Outcome(
        stdout, proc.returncode, lines[-1] if lines else "", frames, None, executed
    )


@dataclasses.dataclass
class ShapeMismatch:
    target: str
    layout: str
    spec: ModuleSpec
    oracle: Outcome
    actual: Outcome

    def signature(self) -> str:
        return mismatch_signature(self.oracle, self.actual, self.layout)

    def report(self) -> str:
        program = render(self.spec)
        parts = [
            f"{self.target} ({self.layout}), model {self.spec.model}: "
            f"{self.signature()}",
            "shapes: " + ", ".join(self.spec.shapes()),
        ]
        want = self.oracle.observable(self.layout)
        got = self.actual.observable(self.layout)
        for field, value in want.items():
            if got[field] != value:
                parts.append(_field_diff(field, value, got[field]))
        for name, text in program.files:
            if name.startswith("app/"):
                parts.append(f"--- {name}:\n{_numbered(text)}")
        if self.actual.executed and self.actual.executed != program.text("app/mod.py"):
            parts.append(f"--- app/mod.py lowered:\n{_numbered(self.actual.executed)}")
        return "\n".join(parts)


def _numbered(text: str, width: int = 200) -> str:
    return "\n".join(
        f"{i:4d}  {line[:width]}{' ...' if len(line) > width else ''}"
        for i, line in enumerate(text.splitlines(), 1)
    )


def _field_diff(field: str, want: object, got: object) -> str:
    if isinstance(want, str) and isinstance(got, str) and "\n" in want + got:
        diff = difflib.unified_diff(
            want.splitlines(), got.splitlines(), "cpython", "transpiled", lineterm=""
        )
        return f"--- {field} differs:\n" + "\n".join(list(diff)[:60])
    return f"--- {field} differs:\n  cpython:    {want!r}\n  transpiled: {got!r}"


def _blank(text: str) -> str:
    text = re.sub(r"_spam\w*", "_spam~", text)
    return re.sub(r"\d+|'[^']*'|\"[^\"]*\"", "~", text)[:160]


def mismatch_signature(oracle: Outcome, actual: Outcome, layout: str) -> str:
    """What kind of difference this is (numbers and strings blanked), to
    report each kind once and to keep shrinking on the same one."""
    if actual.problem:
        return "problem: " + _blank(actual.problem)
    if oracle.problem:
        return "oracle problem: " + _blank(oracle.problem)
    if oracle.returncode != actual.returncode and actual.returncode:
        return f"exit {actual.returncode}: " + _blank(actual.error)
    want = _without_protocol_calls(oracle.stdout).splitlines()
    got = _without_protocol_calls(actual.stdout).splitlines()
    site = ""
    for line in difflib.ndiff(want, got):
        if line[2:].startswith("== f"):
            # where the call came from: a site's kind, "driver", "thread",
            # ...; a match at module level has none
            site = re.sub(r"\d+$", "", line.rsplit("@", 1)[1]) if "@" in line else ""
        if line[:1] == "+" and not line[2:].startswith("== "):
            return f"output at {site or 'module'}: " + _blank(line[2:])
    for line in difflib.ndiff(want, got):
        if line[:1] in "+-":
            return "output: " + _blank(line)
    if oracle.observable(layout) != actual.observable(layout):
        return f"error: {_blank(oracle.error)} -> {_blank(actual.error)}"
    return "same"


class ShapeChecker:
    """Runs ModuleSpecs natively (``oracle``) and on ``targets`` (version ->
    interpreter) in one layout; shrinks differences."""

    def __init__(
        self,
        oracle: str,
        targets: dict[str, str],
        layout: str,
        native: dict[Rendered, Outcome] | None = None,
    ) -> None:
        self.oracle = oracle
        self.targets = dict(targets)
        self.layout = layout
        self.runs = 0
        #: native outcomes, which checkers of other targets and layouts may share
        self._native: dict[Rendered, Outcome] = {} if native is None else native

    def unavailable(self, model: str, target: str) -> str | None:
        """Why ``model`` cannot run for ``target`` here, or None."""
        if model == "import-hook" and target < "3.9":
            return "the import hook runs the tool, which needs Python 3.9+"
        for exe, hooked in ((self.oracle, False), (self.targets[target], True)):
            path, why = model_path(model, exe, hooked)
            if path is None:
                return why
        return None

    def native(self, program: Rendered) -> Outcome:
        if program not in self._native:
            path, _ = model_path(program.model, self.oracle, False)
            self.runs += 1
            self._native[program] = run_program(
                program, self.oracle, target=None, layout=self.layout, path=path or []
            )
        return self._native[program]

    def lowered(self, program: Rendered, target: str) -> Outcome:
        exe = self.targets[target]
        path, _ = model_path(program.model, exe, True)
        self.runs += 1
        return run_program(
            program, exe, target=target, layout=self.layout, path=path or []
        )

    def differs(self, spec: ModuleSpec, target: str) -> ShapeMismatch | None:
        program = render(spec)
        oracle = self.native(program)
        actual = self.lowered(program, target)
        if oracle.observable(self.layout) == actual.observable(self.layout):
            return None
        return ShapeMismatch(target, self.layout, spec, oracle, actual)

    def check(self, spec: ModuleSpec) -> dict[str, ShapeMismatch | None | str]:
        """Per target: the mismatch, None (same), or why it was skipped."""
        results: dict[str, ShapeMismatch | None | str] = {}
        for target in self.targets:
            why = self.unavailable(spec.model, target)
            results[target] = why if why else self.differs(spec, target)
        return results

    def shrink(self, found: ShapeMismatch, budget: int = 60) -> ShapeMismatch:
        """Greedily drop chunks, header lines, subjects, cases and pattern
        parts while the same kind of difference stays."""
        kind = found.signature()
        improved = True
        while improved and budget > 0:
            improved = False
            for candidate in spec_variants(found.spec):
                if not valid_program(candidate):
                    continue
                budget -= 1
                smaller = self.differs(candidate, found.target)
                if smaller is not None and smaller.signature() == kind:
                    found, improved = smaller, True
                    break
                if budget <= 0:
                    break
        return found


def valid_program(spec: ModuleSpec) -> bool:
    """Whether mod.py compiles (on 3.10+; older tools cannot tell)."""
    if sys.version_info < (3, 10):
        return True
    try:
        compile(module_source(spec), "mod.py", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _copy(spec: ModuleSpec, **changes: Any) -> ModuleSpec:
    chunks = [dataclasses.replace(c) for c in spec.chunks]
    subjects = {k: list(v) for k, v in spec.subjects.items()}
    new = dataclasses.replace(spec, chunks=chunks, subjects=subjects)
    return dataclasses.replace(new, **changes) if changes else new


def spec_variants(spec: ModuleSpec) -> Iterator[ModuleSpec]:
    """One-step simplifications of a program, biggest first."""
    # towards "script", the simplest model, never back
    simpler = {"script": (), "import": ("script",)}.get(
        spec.model, ("script", "import")
    )
    for model in simpler:
        yield _without_probe(_copy(spec, model=model))
    yield from _fewer_chunks(spec)
    for name, plain in (
        ("docstring", "none"),
        ("shebang", False),
        ("encoding", ""),
        ("comment", False),
        ("future", False),
    ):
        if getattr(spec, name) != plain:
            yield _copy(spec, **{name: plain})
    yield from _fewer_subjects(spec)
    for k, c in enumerate(spec.chunks):
        if c.kind == "import" and c.variant == "try":
            new = _copy(spec)
            new.chunks[k].variant = "simple"
            yield new
        if c.kind == "def" and c.variant not in ("top", "tiny"):
            new = _copy(spec)
            new.chunks[k].variant = "top"
            yield new
        if c.kind == "def" and c.doctest:
            new = _copy(spec)
            new.chunks[k].doctest = False
            yield new
    for k, c in enumerate(spec.chunks):
        if c.spec is None:
            continue
        for simpler in statement_variants(c.spec):
            new = _copy(spec)
            new.chunks[k].spec = simpler
            yield new


def _without_probe(spec: ModuleSpec) -> ModuleSpec:
    if spec.model != "threads":
        spec.chunks = [c for c in spec.chunks if c.kind != "probe"]
    return spec


def _fewer_chunks(spec: ModuleSpec) -> Iterator[ModuleSpec]:
    statements = spec.statements()
    for k, c in enumerate(spec.chunks):
        if c.kind in ("import", "probe"):
            continue
        drop = {k}
        if c.kind == "def":
            drop |= {
                i for i, o in enumerate(spec.chunks) if o.kind in SITES and o.fn == c.fn
            }
        kept = [o for i, o in enumerate(spec.chunks) if i not in drop]
        if not any(o.kind == "def" for o in kept) and spec.model != "script":
            continue
        if sum(1 for o in kept if o.spec is not None) == 0 < statements:
            continue
        new = _copy(spec)
        new.chunks = [dataclasses.replace(o) for o in kept]
        if new.docstring == "doctest" and not new.defs():
            new.docstring = "multi-line"
        yield new


def _fewer_subjects(spec: ModuleSpec) -> Iterator[ModuleSpec]:
    for fn, subjects in spec.subjects.items():
        owner = next((c for c in spec.chunks if c.fn == fn and c.spec), None)
        if len(subjects) <= 1 or owner is None:
            continue
        keep = [owner.subject] if owner.kind in BODIES[1:] else range(len(subjects))
        for j in keep:
            new = _copy(spec)
            new.subjects[fn] = [subjects[j]]
            for c in new.chunks:
                if c.fn == fn and c.kind in BODIES:
                    c.subject = 0
            yield new


def unlikely_names(source: str) -> list[str]:
    """Names mod.py reads that nothing defines (a generator bug)."""
    import builtins

    tree = ast.parse(source)
    bound = set(FZ_EXPORTS) | set(dir(builtins)) | {"__name__", "__file__"}
    bound |= {"enum", "sys", "TYPE_CHECKING"}  # builtins too (SITECUSTOMIZE)
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.MatchAs) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    loads = {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return sorted(loads - bound - {"builtins", "__builtins__"})


def generate(
    ch: Chooser,
    count: int,
    *,
    only: str | None = None,
    models: Sequence[str] = MODELS,
    instrumented: bool = True,
    max_defs: int = 6,
) -> Iterator[ModuleSpec]:
    """Programs until ``count`` match statements were generated."""
    gen = ShapeGen(ch, instrumented=instrumented, models=models, max_defs=max_defs)
    made = 0
    while made < count:
        spec = gen.program(only)
        made += spec.statements()
        yield spec


def tally(
    counts: dict[str, list[int]], keys: Iterable[str], spec: ModuleSpec, bad: bool
) -> None:
    """counts[key] = [programs, statements, mismatching programs]."""
    for key in keys:
        row = counts.setdefault(key, [0, 0, 0])
        row[0] += 1
        row[1] += spec.statements()
        row[2] += int(bad)


def format_counts(title: str, counts: dict[str, list[int]]) -> str:
    width = max([len(title)] + [len(k) for k in counts])
    lines = [f"  {title:<{width}}  programs  statements  mismatching"]
    for key, (programs, statements, bad) in sorted(counts.items()):
        lines.append(f"  {key:<{width}}  {programs:8d}  {statements:10d}  {bad:11d}")
    return "\n".join(lines)
