"""The whole pipeline for one source text: parse -> validate -> lower -> emit.

``transpile`` is the pure core every entry point (CLI, hooks, build
integrations) calls; it never touches the file system.

Before LibCST sees a file, CPython (3.10+) judges it whole, so that every
error CPython's compiler would report is reported, and patterns nested so
deeply that LibCST's parser would take ages are refused. LibCST then parses
the file's normalised layout (spam_transpile.syntax.layout) and the result
is put back in the user's layout. In the keep-lines layout LibCST is given
only the top-level statements the lowering needs
(spam_transpile.syntax.partial); whatever goes wrong there, the whole file
is parsed and lowered instead, so that
errors are those of the whole file. Parsing and lowering run in a thread
with a large stack: their recursion follows the file's structure (an
``elif`` per case, a node per operator), and CPython's limits, not ours,
must decide what is too deep.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import threading
from typing import Callable, List, Optional, Tuple, TypeVar

import libcst as cst

from spam_transpile.syntax.codegen import code_for
from spam_transpile.checks.verify import (
    check_lines_kept,
    check_output,
    check_output_compiles,
)
from spam_transpile.errors import TranspileError, TranspileWarning
from spam_transpile.syntax.layout import Layout, restore_layout, split_layout
from spam_transpile.lowering.names import (
    Names,
    bound_names,
    identifiers_in,
    standard_ast,
)
from spam_transpile.lowering.dynamic_names import (
    cst_binds_unseen,
    may_rebind,
    shadowed_builtins,
)
from spam_transpile.lowering.positions import in_source_order
from spam_transpile.lowering.scopes import functions_in_order
from spam_transpile.lowering.facts import ModuleFacts, binding_counts, module_facts
from spam_transpile.lowering.project_facts import ProjectFacts, declared_classes
from spam_transpile.files.line_length import line_limits_for
from spam_transpile.lowering.readable_file import format_readable, with_line_endings
from spam_transpile.lowering.transformer import MatchLowering
from spam_transpile.syntax.parse import (
    CPythonView,
    Unparsable,
    check_compiles,
    check_encodable,
    check_pattern_nesting,
    cpython_view,
    cst_has_match_statement,
    may_hold_match,
    parse_source,
)
from spam_transpile.syntax.partial import lowering_of, partial_source
from spam_transpile.settings import LAYOUTS, LineLimits, Target, parse_target

# The stack and recursion limit of the worker thread: room for a recursion
# depth of tens of thousands of frames (2,000 cases, 10,000-term sums).
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 200_000

T = TypeVar("T")


def check_layout(layout: str, filename: str) -> str:
    if layout not in LAYOUTS:
        raise TranspileError(
            f"unknown layout {layout!r} (choose from {', '.join(LAYOUTS)})",
            filename=filename,
            lineno=1,
            offset=1,
        )
    return layout


def transpile(
    source: str,
    *,
    target: str = "3.9",
    filename: str = "<unknown>",
    layout: str = "keep-lines",
    project: Optional[ProjectFacts] = None,
) -> str:
    """Return ``source`` with every match statement lowered for ``target``.

    ``layout``: "keep-lines" (every line keeps its number: what ships) or
    "readable" (real statements laid out for people: what ``--in-place``
    writes). ``project``: in the readable layout, read the classes the file
    imports from the other modules of its project (``filename`` on disk)
    from there. Raises :class:`TranspileError` for invalid source, for match
    statements CPython would reject, and for targets this version cannot
    serve.
    """
    return transpile_with_warnings(
        source, target=target, filename=filename, layout=layout, project=project
    )[0]


def transpile_with_warnings(
    source: str,
    *,
    target: str = "3.9",
    filename: str = "<unknown>",
    layout: str = "keep-lines",
    project: Optional[ProjectFacts] = None,
) -> Tuple[str, List[TranspileWarning]]:
    """Like :func:`transpile`, also returning warnings (unreachable cases)."""
    style = check_layout(layout, filename)
    warnings: List[TranspileWarning] = []
    version = parse_target(target, filename=filename)
    check_encodable(source, filename)
    lines = split_layout(source)
    # CPython's reading runs here, in the caller's thread: its recursion
    # limits are the ones the user's interpreter has.
    text = _without_bom(source)
    view = cpython_view(text, filename)
    if view.tree is not None and not may_hold_match(source):
        # Valid, and no line can start a match statement: nothing to lower,
        # and nothing for LibCST to parse.
        return source, warnings
    matches = view.matches() if view.tree is not None else None
    # A file without match statements comes back as it is: CPython judges
    # only files there is something to lower in.
    judged = bool(matches)
    deferred = check_compiles(text, filename) if judged else None
    check_pattern_nesting(source, filename, matches, lines.lines)
    lowered = None
    limits = LineLimits()
    if style == "readable" and project is not None:
        limits, consulted = line_limits_for(filename)
        project.note(filename, consulted)
    if view.tree is not None and style == "keep-lines" and version.has_walrus:
        # Before 3.8 the lowering searches every expression for ``:=``.
        lowered = _deep(
            _lower_partially,
            lines.text,
            filename,
            version,
            view.tree,
            view.matches(),
            view.nodes(),
        )
    if lowered is None:
        try:
            lowered = _lower_whole_file(
                source, lines, view, filename, version, style, project, limits
            )
        except TranspileError as error:
            if view.tree is None or not _TAB_INDENTED.search(source):
                raise
            # CPython reads it: LibCST may have refused mixed tabs and spaces.
            # If it refuses the file in spaces too, the first error stands.
            lines = split_layout(source, expand_tabs=True)
            try:
                lowered = _lower_whole_file(
                    source, lines, view, filename, version, style, project, limits
                )
            except TranspileError:
                raise error from None
        if lowered is None:
            return source, warnings
    if deferred is not None:
        raise deferred  # CPython's compiler refuses it; the rules missed it
    output, found = lowered
    warnings.extend(found)
    if output is lines.text:
        return source, warnings
    if style == "readable":
        # Lines move in this layout; what must hold is that it compiles.
        output = format_readable(lines.text, output, filename, limits.wrap)
        output = with_line_endings(source, output)
        check_output_compiles(source, output, filename)
        return output, warnings
    check_lines_kept(lines.text, output, filename)
    output = restore_layout(lines, output)
    check_lines_kept(source, output, filename)
    nodes = view.nodes() if view.tree is not None else None
    check_output(source, output, nodes, version, filename)
    return output, warnings


# A line indented with a tab somewhere in its indentation.
_TAB_INDENTED = re.compile(r"(?:^|(?<=[\r\n]))[ \f]*\t")


def _lower_whole_file(
    source: str,
    lines: Layout,
    view: CPythonView,
    filename: str,
    version: Target,
    style: str,
    project: Optional[ProjectFacts] = None,
    limits: LineLimits = LineLimits(),
) -> Optional[Tuple[str, List[TranspileWarning]]]:
    """LibCST parses the whole file, and the lowering runs on it; None when
    the file is to be returned as it is (nothing LibCST can lower in it)."""
    try:
        module = _deep(parse_source, lines.text, filename, source)
    except Unparsable:
        return None
    except TranspileError as error:
        raise _original_columns(error, lines) from None
    if view.error is not None:
        if not cst_has_match_statement(module):
            return None
        raise _first_error(module, view.error, lines, filename)
    if not may_hold_match(source):
        return None
    tree = view.tree if view.available else standard_ast(lines.text)
    matches = view.matches() if view.tree is not None else None
    try:
        return _deep(
            _lower_module,
            module,
            lines.text,
            filename,
            version,
            tree,
            style,
            in_source_order(matches),
            view.nodes() if tree is view.tree and tree is not None else None,
            project=project,
            limits=limits,
        )
    except TranspileError as error:
        raise _original_columns(error, lines) from None
    except RecursionError:
        raise TranspileError(
            "too deeply nested to transpile", filename=filename
        ) from None
    except Exception as exc:  # a bug of ours; never a raw traceback for users
        raise TranspileError(
            f"internal error ({type(exc).__name__}: {exc}); please report this",
            filename=filename,
        ) from exc


def _lower_partially(
    text: str,
    filename: str,
    version: Target,
    tree: ast.Module,
    matches: List[ast.Match],
    nodes: List[ast.AST],
) -> Optional[Tuple[str, List[TranspileWarning]]]:
    """The keep-lines lowering of ``text`` with LibCST given only the
    statements it needs (spam_transpile.syntax.partial), or None to run on
    the whole file instead: whenever anything goes wrong, that run decides
    what to report, so errors stay those of the whole file."""
    facts = module_facts(tree, nodes)
    partial = partial_source(text, tree, nodes, facts)
    if partial is None:
        return None
    try:
        module = cst.parse_module(partial.text)
        with lowering_of(partial):
            output, warnings = _lower_module(
                module,
                text,
                filename,
                version,
                tree,
                "keep-lines",
                in_source_order(matches),
                nodes,
                facts=partial.facts,
            )
    except Exception:  # NotParsed, an error to report, a refusal of LibCST's
        return None
    if output is text:
        return output, warnings
    spliced = partial.splice(output)
    return None if spliced is None else (spliced, warnings)


def _without_bom(source: str) -> str:
    # CPython drops a UTF-8 byte order mark when it reads a file; compile()
    # given a str would call it an invalid character.
    return source[1:] if source.startswith("\ufeff") else source


def _lower_module(
    module: cst.Module,
    source: str,
    filename: str,
    target: Target,
    tree: Optional[ast.Module],
    style: str = "keep-lines",
    matches_in_order: Optional[List[ast.Match]] = None,
    nodes: Optional[List[ast.AST]] = None,
    facts: Optional[ModuleFacts] = None,
    project: Optional[ProjectFacts] = None,
    limits: LineLimits = LineLimits(),
) -> Tuple[str, List[TranspileWarning]]:
    """``nodes``: every node of ``tree`` (CPythonView.nodes), walked once;
    ``facts``: the module's facts, when the caller has them at hand."""
    if facts is None:
        facts = module_facts(tree, nodes)
    if style == "readable" and tree is not None:
        nodes = list(ast.walk(tree)) if nodes is None else nodes
        counts = binding_counts(nodes)
        facts.declared = declared_classes(tree, nodes, facts, counts)
        if project is not None and facts.unseen is False:
            # (a star import may bind an imported name again)
            imported = project.imported_classes(filename, tree, counts)
            facts.declared.update(imported)
    # The facts counted the module's bindings: the same names, one walk.
    bound = facts.bound if facts.bound is not None else bound_names(module)
    unseen = facts.unseen
    if unseen is None:
        unseen = may_rebind(source) and cst_binds_unseen(module)
    names = Names(identifiers_in(source), shadowed_builtins(bound, unseen))
    transformer = MatchLowering(
        module,
        names,
        filename,
        source,
        target,
        functions_in_order(tree, nodes),
        facts,
        style,  # the output layout
        matches_in_order,
        limits,
    )
    result = transformer.rewrite()
    if transformer.failed is not None:
        raise transformer.failed
    if not transformer.match_count:
        return source, transformer.warnings
    return code_for(result, result), transformer.warnings


def _first_error(
    module: cst.Module, cpython: TranspileError, layout: Layout, filename: str
) -> TranspileError:
    """CPython's parser refused a file LibCST parsed: the pattern rules know
    where CPython 3.12+ points errors inside match statements (``case +1``),
    so they speak first; otherwise CPython's own error stands."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from spam_transpile.checks.validate import check_module

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    def position(node: cst.CSTNode) -> Tuple[int, int]:
        start = positions[node].start
        return start.line, start.column + 1

    try:
        _deep(
            check_module,
            module,
            filename=filename,
            position=position,
            source=layout.text,
        )
    except TranspileError as error:
        return _original_columns(error, layout)
    return cpython


def _original_columns(error: TranspileError, layout: Layout) -> TranspileError:
    """Errors found in the normalised layout, moved to the user's columns."""
    lineno, offset = error.lineno or 1, error.offset or 1
    if layout.changed and 0 < lineno <= len(layout.removed):
        error.offset = offset + layout.removed[lineno - 1]
        error.args = (error.msg, (error.filename, error.lineno, error.offset, None))
    return error


# --------------------------------------------------------------------------
# A thread with room to recurse

_limit_lock = threading.Lock()
_deep_calls = 0
_saved_limit = 0


def _deep(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``function(*args, **kwargs)`` on a thread with a large stack and a
    high recursion limit; exceptions propagate to the caller."""
    results: List[T] = []
    errors: List[BaseException] = []

    def run() -> None:
        try:
            results.append(function(*args, **kwargs))
        except BaseException as exc:  # handed to the calling thread
            errors.append(exc)

    _raise_limit()
    try:
        if not _on_worker(run):
            # No room for such a stack (a ulimit -v, say): run here, with
            # this thread's stack and limit.
            _restore_limit()  # this stack is not sized for the raised limit
            try:
                run()
            finally:
                _raise_limit()
    finally:
        _restore_limit()
    if errors:
        raise errors[0]
    return results[0]


class _Worker:
    """A thread with a large stack that runs one job at a time and then
    waits for the next.

    Workers are kept for the next call, not started per call: a fresh
    thread costs more than the work on a small file (starting it, then
    faulting in the stack pages and warming the allocator as LibCST's
    parser runs, which made the parse a third slower than on a warm thread).
    They are daemons: an idle worker must not keep the process alive.
    """

    def __init__(self) -> None:
        self._wake = threading.Lock()
        self._wake.acquire()
        self._job: Optional[Tuple[Callable[[], None], threading.Lock]] = None
        self.thread = threading.Thread(
            target=self._serve, name="spam-transpile", daemon=True
        )

    def give(self, job: Callable[[], None], done: threading.Lock) -> None:
        """Run ``job`` (which raises nothing), then release ``done``."""
        self._job = (job, done)
        self._wake.release()

    def _serve(self) -> None:
        while True:
            self._wake.acquire()
            assert self._job is not None
            (job, done), self._job = self._job, None
            try:
                job()
            finally:
                # Idle again before the caller goes on, so that its next
                # call finds this worker instead of starting another.
                with _pool_lock:
                    _idle.append(self)
                done.release()


_pool_lock = threading.Lock()
_idle: List[_Worker] = []


def _on_worker(job: Callable[[], None]) -> bool:
    """Run ``job`` on an idle worker, or a new one; False if none can start."""
    with _pool_lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _started_worker()
        if worker is None:
            return False
    done = threading.Lock()
    done.acquire()
    worker.give(job, done)
    done.acquire()  # released by the worker once the job has run
    return True


def _started_worker() -> Optional[_Worker]:
    with _limit_lock:  # stack_size() is process-wide: set, start, reset
        previous = threading.stack_size(_STACK_BYTES)
        try:
            worker = _Worker()
            worker.thread.start()
        except (RuntimeError, MemoryError):
            return None
        finally:
            threading.stack_size(previous)
    return worker


def _forget_workers() -> None:
    # A forked child (a process pool's worker) has none of the parent's
    # threads: its idle list would hand jobs to threads that do not exist.
    global _pool_lock, _idle
    _pool_lock = threading.Lock()
    _idle = []


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_forget_workers)


def _raise_limit() -> None:
    # The limit is per interpreter: raised while any deep call runs, put back
    # when the last one ends.
    global _deep_calls, _saved_limit
    with _limit_lock:
        if _deep_calls == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _RECURSION_LIMIT))
        _deep_calls += 1


def _restore_limit() -> None:
    global _deep_calls
    with _limit_lock:
        _deep_calls -= 1
        if _deep_calls == 0:
            sys.setrecursionlimit(_saved_limit)
