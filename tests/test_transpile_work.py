"""How much work a transpile does, counted (never timed): LibCST nodes built,
parses, and nodes the lowering enters."""

from __future__ import annotations

import ast
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import libcst as cst
import pytest

import spam_transpile.pipeline as pipeline
from spam_transpile import TranspileError, transpile
from spam_transpile.settings import Target

needs_310 = pytest.mark.skipif(
    sys.version_info < (3, 10), reason="the standard tree needs 3.10+"
)


def _count_nodes_built(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Count every LibCST node created from now on (parsing included)."""
    built = [0]
    original = cst.CSTNode.__post_init__

    def counting(self: cst.CSTNode) -> None:
        built[0] += 1
        original(self)

    monkeypatch.setattr(cst.CSTNode, "__post_init__", counting)
    return lambda: built[0]


def _nodes_built(monkeypatch: pytest.MonkeyPatch, source: str, target: str) -> int:
    with monkeypatch.context() as patch:
        count = _count_nodes_built(patch)
        transpile(source, target=target)
        return count()


def _cases(kind: str, n: int) -> Iterator[str]:
    for i in range(n):
        if kind == "class":
            yield f"Point(x={i}, y=[{i}, *rest]) if rest"
        elif kind == "sequence":
            yield f"[{i}, (a, {i}.5), *rest]"
        elif kind == "mapping":
            yield f"{{'k{i}': [{i}, b], **rest}}"
        else:
            yield f"{i} | 'v{i}' | None"


def _match(kind: str, n: int) -> str:
    cases = "".join(
        f"        case {case}:\n            return {i}\n"
        for i, case in enumerate(_cases(kind, n))
    )
    return (
        "from dataclasses import dataclass\n\n@dataclass\nclass Point:\n"
        "    x: int\n    y: list\n\n"
        f"def f(s):\n    match s:\n{cases}        case _:\n            return -1\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["class", "sequence", "mapping", "literals"])
@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_nodes_built_grow_linearly_with_the_cases(
    monkeypatch: pytest.MonkeyPatch, kind: str, target: str
) -> None:
    transpile(_match(kind, 2), target=target)  # warm the caches of literals
    small = _nodes_built(monkeypatch, _match(kind, 40), target)
    large = _nodes_built(monkeypatch, _match(kind, 80), target)
    # Twice the cases build twice the nodes, plus what the file has anyway;
    # one node more per pair of cases would be 1,600 more.
    assert large <= 2 * small + 50, (small, large)


@needs_310
def test_code_outside_match_statements_costs_the_lowering_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The lowering rebuilds only the blocks around a match statement, however
    # many simple statements and expressions sit beside it.
    def source(lines: int) -> str:
        filler = "".join(f"    y{i} = [x, {{'a': (x, {i})}}]\n" for i in range(lines))
        return f"def f(x):\n{filler}    match x:\n        case [a]:\n            pass\n"

    def built_by_lowering(text: str) -> int:
        module, tree = cst.parse_module(text), ast.parse(text)
        with monkeypatch.context() as patch:
            count = _count_nodes_built(patch)
            pipeline._lower_module(module, text, "<s>", Target(3, 9), tree)
            return count()

    assert built_by_lowering(source(100)) == built_by_lowering(source(10))


@needs_310
def test_files_without_match_statements_are_not_parsed_by_libcst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed by LibCST")

    monkeypatch.setattr(pipeline, "parse_source", refuse)
    source = "import re\nmatched = re.match('a', 'a')\nif (n := 1):\n    pass\n"
    assert transpile(source) is source
    assert transpile(source, target="3.6") is source  # as before: := not looked for
    monkeypatch.undo()
    with pytest.raises(TranspileError):  # invalid files are still judged
        transpile("def f(:\n    pass\n")


@needs_310
def test_only_functions_holding_a_match_statement_get_their_locals_analysed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import spam_transpile.lowering.scopes as scopes

    analysed = []
    original = scopes._stable_locals_of

    def counting(function: ast.FunctionDef) -> frozenset:
        analysed.append(function.name)
        return original(function)

    monkeypatch.setattr(scopes, "_stable_locals_of", counting)
    methods = "".join(f"    def m{i}(self, x):\n        return x\n" for i in range(30))
    source = (
        f"class C:\n{methods}"
        "    def f(self, x):\n        match x:\n            case [a]:\n"
        "                return a\n"
    )
    output = transpile(source)
    assert analysed == ["f"]
    # the match line reads the local subject (no temporary): its names were known
    assert output.splitlines()[-3].endswith("; x")


def _sources_with_matches() -> Iterator[Tuple[str, str]]:
    root = Path(__file__).resolve().parent.parent
    for folder in (
        root / "fixtures" / "cases",
        root / "scripts" / "bench" / "fixtures",
    ):
        for path in sorted(folder.glob("*.py")):
            if not path.name.endswith(".out.py"):
                yield path.name, path.read_text(encoding="utf-8")
    patma = Path(ast.__file__).parent / "test" / "test_patma.py"
    if sys.version_info >= (3, 10) and patma.exists():
        yield patma.name, patma.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["keep-lines", "readable"])
def test_the_walk_through_blocks_lowers_as_libcsts_own_walk(
    monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    import spam_transpile.lowering.transformer as transformer

    def lowered() -> List[str]:
        return [
            transpile(source, filename=name, layout=layout)
            for name, source in _sources_with_matches()
        ]

    through_blocks = lowered()
    monkeypatch.setattr(
        transformer, "rewrite_blocks", lambda module, visitor: module.visit(visitor)
    )
    assert through_blocks == lowered()


@pytest.mark.slow
def test_plain_code_generation_writes_what_libcst_writes() -> None:
    from libcst._nodes.base import CSTCodegenError

    from spam_transpile.syntax.codegen import code_for

    for name, source in _sources_with_matches():
        module = cst.parse_module(source)
        assert code_for(module, module) == module.code == source, name
        nodes: List[cst.CSTNode] = []

        class Collect(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                nodes.append(node)
                return True

        module.visit(Collect())
        for node in nodes[::7]:  # a sample of every kind, in every context
            try:
                expected = module.code_for_node(node)
            except CSTCodegenError:
                continue  # a node that only has code within its parent
            assert code_for(node, module) == expected, name
        assert code_for(nodes[1]) == cst.Module(body=[]).code_for_node(nodes[1])


def test_the_shared_walk_of_the_standard_tree_is_ast_walk() -> None:
    from spam_transpile.syntax.parse import _walk

    for name, source in _sources_with_matches():
        if sys.version_info < (3, 10):
            break
        tree = ast.parse(source)
        walked = _walk(tree)
        expected = list(ast.walk(tree))
        assert len(walked) == len(expected), name
        assert all(a is b for a, b in zip(walked, expected)), name


_SMALL_MATCH = "def f(x):\n    match x:\n        case [a]:\n            return a\n"


def test_transpiles_reuse_the_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    transpile(_SMALL_MATCH)  # a worker exists from now on
    started = []
    original = threading.Thread.start

    def counting(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", counting)
    for _ in range(3):
        transpile(_SMALL_MATCH)
    assert started == []


def test_concurrent_transpiles_each_get_a_worker() -> None:
    from concurrent.futures import ThreadPoolExecutor

    expected = transpile(_SMALL_MATCH)
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(lambda _: transpile(_SMALL_MATCH), range(16)))
    assert outputs == [expected] * 16


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_worker() -> None:
    # The parent's idle worker is a thread the child does not have: handing
    # it a job would wait forever.
    expected = transpile(_SMALL_MATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
        pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        signal.alarm(60)
        try:
            os._exit(0 if transpile(_SMALL_MATCH) == expected else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


# -- LibCST given only the statements the lowering needs (spam_transpile.syntax.partial)


def _whole_file_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "_lower_partially", lambda *args: None)


def _partial_runs(monkeypatch: pytest.MonkeyPatch) -> List[bool]:
    """Record, per transpile, whether the partial parse did the work."""
    done: List[bool] = []
    original = pipeline._lower_partially

    def recording(*args: object) -> object:
        result = original(*args)
        done.append(result is not None)
        return result

    monkeypatch.setattr(pipeline, "_lower_partially", recording)
    return done


_MATCH_DEF = "def f(x):\n    match x:\n        case [a, *rest]:\n            return a\n"


@needs_310
def test_statements_without_match_are_not_parsed_by_libcst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    filler = "".join(f"    y{i} = [y, {{'a': (y, {i})}}]\n" for i in range(10))

    def source(count: int) -> str:
        defs = "".join(f"\n\ndef g{i}(y):\n{filler}" for i in range(count))
        return f'"""Doc."""\n\nimport os\n\n\n{_MATCH_DEF}{defs}'

    def growth() -> int:
        """Nodes built per 10 more statements without a match statement."""
        small = _nodes_built(monkeypatch, source(10), "3.9")
        return _nodes_built(monkeypatch, source(20), "3.9") - small

    partial = growth()
    with monkeypatch.context() as patch:
        _whole_file_only(patch)
        whole = growth()
    # each a stand-in of a few nodes over its lines, not its hundreds of nodes
    assert whole > 10 * 300 and partial < 10 * 30, (whole, partial)


PARTIAL_SOURCES = {
    # the helper needs more lines than the head has before the stand-ins
    "helper-reaches-stand-ins": "import os\nX = 1\ndef g():\n    return 1\n"
    "Y = 2\nclass C:\n    a = 1\n" + _MATCH_DEF,
    "no-room-at-all": "def g():\n    return 1\ndef h():\n    pass\n" + _MATCH_DEF,
    "helper-after-inert-def": "def g(a=1, b: int = -2):\n    return 1\nY = 2\n"
    + _MATCH_DEF,
    "room-after-code": "import os\nprint(os)\n\n\n" + _MATCH_DEF,
    # LibCST gives the blank line before an indented comment to the block
    "comment-after-block": "import os\ndef g():\n    return 1\n\n    # c\n\n"
    "X = 1\n" + _MATCH_DEF,
    "decorated": "import functools\n@functools.cache\n\n# c\ndef g():\n"
    "    return 1\n" + _MATCH_DEF,
    # the first indented block sets LibCST's default indentation
    "two-space-first": "def g():\n  if g:\n    return 1\n" + _MATCH_DEF,
    "tab-first": "class C:\n\tx = 1\n" + _MATCH_DEF,
    "one-liner-first": "class C: pass\nif C: pass\n" + _MATCH_DEF,
    "semicolons": "import os; X = 1\nY = 2; \\\nZ = 3\n" + _MATCH_DEF,
    "match-in-class": "X = 1\nclass C:\n    def m(self, x):\n        match x:\n"
    "            case {'k': v}:\n                return v\nY = [X]\n",
    "future-and-doc": '"""Doc."""\nfrom __future__ import annotations\n'
    "def g() -> int:\n    return 1\n" + _MATCH_DEF,
    "no-final-newline": _MATCH_DEF + "\n\ndef g():\n    return 1",
    "user-name-like-a-stand-in": "_spam_not_parsed_0 = 1\n_spam_not_parsed_0\n"
    + _MATCH_DEF,
    # the first indented block over several lines, with a blank line in it:
    # the helper's carriers go on blank lines, never inside a stand-in
    # a ``def`` inside a stand-in still counts among the module's functions
    "def-in-stand-in": "class P:\n    x: int\n\n\nclass T:\n    def m(self):\n"
    "        return 1\n\n\n" + _MATCH_DEF,
    "carriers-after-first-block": '"""Doc."""\nclass C:\n    a = 1\n\n    b = 2\n'
    "\n\ndef f(x):\n    match x:\n        case [v, *rest] if rest:\n"
    "            return rest\n        case {'k': v, **rest}:\n"
    "            return rest\n",
}


@needs_310
@pytest.mark.parametrize("name", ["carriers-after-first-block", "decorated"])
def test_the_partial_parse_does_the_work(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """No second run over the whole file: it would double the work."""
    done = _partial_runs(monkeypatch)
    transpile(PARTIAL_SOURCES[name])
    assert done == [True]


@needs_310
@pytest.mark.parametrize(
    "name", ["def-in-stand-in", "decorated", "carriers-after-first-block"]
)
def test_stand_ins_keep_the_stable_locals_aligned(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The ``def``s of statements the walk never sees (stand-ins of a
    decorated def or a class) still count: the list of stable locals the
    ast gave stays in step with the functions LibCST visits, so the walk
    keeps trusting it instead of giving it up."""
    from spam_transpile.lowering.transformer import MatchLowering

    trusted: List[bool] = []
    original = MatchLowering.visit_FunctionDef

    def recording(self: MatchLowering, node: cst.FunctionDef) -> None:
        original(self, node)
        trusted.append(self._functions is not None)

    monkeypatch.setattr(MatchLowering, "visit_FunctionDef", recording)
    done = _partial_runs(monkeypatch)
    transpile(PARTIAL_SOURCES[name])
    assert done == [True]
    assert trusted and all(trusted)


@needs_310
@pytest.mark.parametrize("name", sorted(PARTIAL_SOURCES))
@pytest.mark.parametrize("target", ["3.9", "3.8"])
def test_the_partial_parse_writes_what_the_whole_file_parse_writes(
    monkeypatch: pytest.MonkeyPatch, name: str, target: str
) -> None:
    source = PARTIAL_SOURCES[name]
    for variant in (source, source.replace("\n", "\r\n")):
        partial = transpile(variant, target=target)
        with monkeypatch.context() as patch:
            _whole_file_only(patch)
            assert transpile(variant, target=target) == partial


@needs_310
def test_the_helper_placement_parses_the_stand_ins_it_reaches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = _partial_runs(monkeypatch)
    output = transpile(PARTIAL_SOURCES["helper-after-inert-def"])
    assert done == [True]
    assert "_spam_not_parsed_" not in output
    # ``def g`` and ``Y = 2`` were stand-ins until the helper needed them:
    # creating g runs no code, so the line after it still runs first
    line = output.splitlines()[2]
    assert line.startswith("global _spam; _spam = ") and line.endswith("; Y = 2")
    # nothing after the first statement that may run code: an import
    output = transpile(PARTIAL_SOURCES["helper-reaches-stand-ins"])
    assert output.splitlines()[0].startswith("global _spam; _spam = ")
    assert "import os" in output.splitlines()[0]


@needs_310
def test_what_libcst_refuses_outside_match_statements_is_still_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "def g():\n    (x): int = 1\n\n\n" + _MATCH_DEF
    with pytest.raises(TranspileError) as refused:
        transpile(source)
    _whole_file_only(monkeypatch)
    with pytest.raises(TranspileError) as whole:
        transpile(source)
    assert str(refused.value) == str(whole.value)


def test_node_kinds_told_apart_by_exact_type_have_no_subclasses() -> None:
    # The walks and the lowering test ``type(node) is cst.MatchAs`` (and
    # cstwalk.NODE_TYPES) instead of isinstance(), which goes through
    # ABCMeta for every LibCST class: exact only while no LibCST class they
    # name has a subclass. A LibCST that adds one fails here first. (Name
    # is left out: the emitters' raw-text nodes subclass it, and they never
    # reach a test of ``type(node) is cst.Name``, which asks of source nodes.)
    from spam_transpile.syntax.cstwalk import NODE_TYPES

    kinds = [
        *(cst.MatchAs, cst.MatchOr, cst.MatchValue, cst.MatchSingleton),
        *(cst.MatchList, cst.MatchTuple, cst.MatchMapping, cst.MatchClass),
        *(cst.MatchStar, cst.MatchSequenceElement, cst.Try),
        *(cst.Attribute, cst.Integer, cst.Float, cst.Imaginary),
        *(cst.SimpleString, cst.ConcatenatedString, cst.UnaryOperation, cst.Plus),
    ]
    assert all(kind in NODE_TYPES for kind in kinds)
    assert [kind.__name__ for kind in kinds if kind.__subclasses__()] == []
