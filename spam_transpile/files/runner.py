"""The run: each file read once, settled from the caches where possible,
the rest lowered by the job pool (:mod:`.jobs`), each result written,
printed or checked as it comes back."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence, Set, Tuple

from spam_transpile.files.cache import Cache
from spam_transpile.errors import TranspileError
from spam_transpile.files.discover import Plan, Task
from spam_transpile.syntax.prescan import may_hold_match
from spam_transpile.files.report import Reporter, count_lowered_matches
from spam_transpile.files.statcache import COPIED, PLAIN, TRANSPILED, StatCache
from spam_transpile.files.jobs import (
    TranspileJob,
    TranspileOutcome,
    in_input_order,
    run_jobs,
)
from spam_transpile.files.write import (
    ChangedDuringRun,
    SourceFile,
    copy_atomic,
    decode_source,
    describe_os_error,
    describe_write_error,
    encode_output,
    holds,
    read_bytes,
    remove_abandoned_temporaries,
    remove_if_abandoned,
    same_file_copy,
    still_as_read,
    unified_diff,
    write_atomic,
)

# What a run does with each result.
PRINT, WRITE, IN_PLACE, CHECK = "print", "write", "in-place", "check"


class RunOptions(NamedTuple):
    action: str
    diff: bool
    target: str
    layout: str
    workers: int


#: (message, line, column) of an unreachable-case warning
CaseWarning = Tuple[str, int, int]


class _Loaded:
    """A source read and decoded, on its way to its output."""

    __slots__ = ("task", "raw", "source", "info", "warnings", "consulted")

    def __init__(
        self,
        task: Task,
        raw: bytes,
        source: SourceFile,
        info: Optional[os.stat_result] = None,
    ) -> None:
        self.task = task
        self.raw = raw
        self.source = source
        #: the source's stat from before it was read (None for standard input)
        self.info = info
        self.warnings: Tuple[CaseWarning, ...] = ()
        #: the files whose declarations the output relies on, with digests
        self.consulted: Tuple[Tuple[str, str], ...] = ()


class Runner:
    def __init__(
        self,
        options: RunOptions,
        reporter: Reporter,
        cache: Optional[Cache],
        stat_cache: Optional[StatCache] = None,
    ) -> None:
        self.options = options
        self.reporter = reporter
        self.cache = cache
        self.stat_cache = stat_cache
        #: folders already cleared of what interrupted runs left there
        self._swept: Set[str] = set()

    def run(self, plan: Plan, stdin_name: str) -> None:
        for problem in plan.problems:
            self.reporter.failed(problem.format())
        self._clear_leftovers(plan.leftovers)
        tasks = plan.tasks
        if plan.stdin:
            tasks = [Task(Path(stdin_name), plan.stdin_destination, True)]
        self.reporter.start_progress(len(tasks))
        waiting: List[Tuple[_Loaded, TranspileJob]] = []
        for task in tasks:
            deferred = self._settle_or_defer(task, from_stdin=plan.stdin)
            if deferred is not None:
                waiting.append(deferred)
        outcomes = run_jobs([job for _, job in waiting], self.options.workers)
        if self.options.action not in (WRITE, IN_PLACE):
            # What goes to standard output (code, diffs, the would-transpile
            # list) keeps the input's order; files are written as they come.
            outcomes = in_input_order(outcomes)
        for index, outcome in outcomes:
            loaded, job = waiting[index]
            self._conclude(loaded, job, outcome)

    # -- what interrupted runs left -----------------------------------------

    def _clear_leftovers(self, paths: Sequence[str]) -> None:
        """Remove the abandoned temporary files of ours found among the inputs."""
        if self.options.action not in (WRITE, IN_PLACE):
            return  # --check and --diff write nothing, so they remove nothing
        for path in paths:
            if remove_if_abandoned(path):
                self._report_removed(path)

    def _sweep_output_folder(self, task: Task) -> None:
        # A file the stat cache cannot vouch for may be one an interrupted
        # run was writing; its temporary file is in the output's folder.
        if self.options.action == WRITE and task.output is not None:
            self._sweep(os.path.dirname(task.output))
        elif self.options.action == IN_PLACE:
            self._sweep(os.path.dirname(task.name))

    def _sweep(self, folder: str) -> None:
        """Remove what interrupted runs left in ``folder``, once per run."""
        if folder in self._swept:
            return
        self._swept.add(folder)
        for path in remove_abandoned_temporaries(folder):
            self._report_removed(path)

    def _report_removed(self, path: str) -> None:
        self.reporter.warning(
            f"{path}: warning: removed the temporary file of an interrupted run"
        )

    # -- phase 1: stat cache, read, pre-scan, cache -------------------------

    def _settle_or_defer(
        self, task: Task, *, from_stdin: bool
    ) -> Optional[Tuple[_Loaded, TranspileJob]]:
        info = task.info
        if info is None and not from_stdin:
            info = _stat_quietly(task.name)  # a file named on the command line
        if info is not None and self._settled_by_stat(task, info):
            return None
        self._sweep_output_folder(task)
        if not task.python:
            self._copy_verbatim(task, info)
            return None
        try:
            loaded = _load(task, info, from_stdin=from_stdin)
        except TranspileError as exc:
            self._fail(task, exc.format())
            return None
        text = loaded.source.text
        if not may_hold_match(text):
            self._deliver(loaded, text, 0)
            return None
        entry = self.cache.lookup(loaded.raw) if self.cache is not None else None
        if entry is not None and entry.error is not None:
            message, line, column = entry.error
            error = TranspileError(
                message, filename=task.name, lineno=line, offset=column
            )
            self._fail(task, error.format())
            return None
        cached = entry.output if entry is not None else None
        if cached is not None:
            loaded.warnings = self._cached_warnings(loaded.raw)
            self._report_warnings(loaded.warnings, task.name)
        if cached is not None and self.options.layout == "keep-lines":
            self._deliver(loaded, cached, count_lowered_matches(text, cached))
            return None
        job = TranspileJob(
            task.name, text, self.options.target, self.options.layout, cached
        )
        return loaded, job

    def _settled_by_stat(self, task: Task, info: os.stat_result) -> bool:
        """Count a file the last run left as it still is, without reading it."""
        if self.stat_cache is None:
            return False
        hit = self.stat_cache.lookup(
            task.absolute, info, python=task.python, destination=self._output_of(task)
        )
        if hit is None:
            return False
        if hit.warnings:
            # They come from the source, which is as it was: say them again.
            self._report_warnings(hit.warnings, task.name)
        if hit.outcome == COPIED:
            self.reporter.copied(task.name, written=False, cached=True)
        elif hit.outcome == PLAIN:
            self.reporter.without_match(task.name, cached=True)
        elif self.options.action == CHECK:
            self.reporter.transpiled(task.name, hit.matches, cached=True)
        else:
            self.reporter.unchanged(task.name, cached=True)  # its output is there
        return True

    def _output_of(self, task: Task) -> Optional[str]:
        """The file this run writes for ``task`` besides the source, if any."""
        return task.output if self.options.action == WRITE else None

    def _fail(self, task: Task, formatted_error: str) -> None:
        # A failed file is never remembered, so every run reports it again.
        if self.stat_cache is not None:
            self.stat_cache.forget(task.absolute)
        self.reporter.failed(formatted_error)

    def _cached_warnings(self, raw: bytes) -> Tuple[CaseWarning, ...]:
        return self.cache.warnings(raw) if self.cache is not None else ()

    def _report_warnings(self, warnings: Sequence[CaseWarning], path: str) -> None:
        for message, line, column in warnings:
            self.reporter.warning(f"{path}:{line}:{column}: warning: {message}")

    # -- phase 2: results --------------------------------------------------

    def _conclude(
        self, loaded: _Loaded, job: TranspileJob, outcome: TranspileOutcome
    ) -> None:
        if (
            self.cache is not None
            and job.cached is None
            and outcome.keep_lines is not None
        ):
            # The source's keep-lines output, whatever became of the layout
            # asked for.
            self.cache.put_output(loaded.raw, outcome.keep_lines)
            # Warnings come from parsing, which a cache hit skips: keep them too.
            self.cache.put_warnings(loaded.raw, outcome.warnings)
        if (
            outcome.error is not None
            or outcome.keep_lines is None
            or outcome.final is None
        ):
            if self.cache is not None and outcome.cacheable_error is not None:
                # Remember what is wrong, so a rerun does not parse it again.
                self.cache.put_error(loaded.raw, *outcome.cacheable_error)
            self._fail(
                loaded.task, outcome.error or f"{job.filename}:1:1: error: no output"
            )
            return
        if job.cached is None:
            loaded.warnings = outcome.warnings
            self._report_warnings(outcome.warnings, loaded.task.name)
        matches = count_lowered_matches(job.text, outcome.keep_lines)
        loaded.consulted = outcome.consulted
        self._deliver(loaded, outcome.final, matches)

    def _deliver(self, loaded: _Loaded, output: str, matches: int) -> None:
        """Print, write or check one result, then count it."""
        task = loaded.task
        changed = output != loaded.source.text
        data = encode_output(output, loaded.source.encoding) if changed else loaded.raw
        try:
            wrote = self._emit(task, loaded, output, data, changed)
        except ChangedDuringRun as exc:
            self._fail(task, f"{task.name}: error: {exc}")
            return
        except OSError as exc:
            where = task.destination if self.options.action == WRITE else task.source
            self._fail(task, f"{where}:1:1: error: {describe_write_error(exc)}")
            return
        except TranspileError as exc:
            self._fail(task, exc.format())
            return
        self._remember(loaded, changed, matches)
        if not changed:
            self.reporter.without_match(task.name)
        elif wrote:
            self.reporter.transpiled(task.name, matches)
        else:
            self.reporter.unchanged(task.name)

    def _remember(self, loaded: _Loaded, changed: bool, matches: int) -> None:
        """Put a delivered file in the stat cache (the output is written by now)."""
        if self.stat_cache is None:
            return
        task = loaded.task
        if self.options.action == IN_PLACE and changed:
            # The output is the source: its stat is taken after the rewrite,
            # and a full rerun would find nothing left to lower in it.
            rewritten = _stat_quietly(task.name)
            self.stat_cache.record(
                task.absolute,
                rewritten,
                destination=None,
                outcome=PLAIN,
                written=True,
            )
            return
        self.stat_cache.record(
            task.absolute,
            loaded.info,
            destination=self._output_of(task),
            outcome=TRANSPILED if changed else PLAIN,
            matches=matches,
            warnings=loaded.warnings,
            consulted=loaded.consulted,
        )

    def _emit(
        self, task: Task, loaded: _Loaded, output: str, data: bytes, changed: bool
    ) -> bool:
        """Print, write or show one result; False when OUT already held it."""
        action = self.options.action
        mode = loaded.source.mode
        if action == PRINT:
            _write_stdout(data)
        elif action == WRITE:
            assert task.destination is not None
            _refuse_overwriting_source(task)
            if holds(task.destination, data, mode):
                return False
            write_atomic(task.destination, data, mode, durable=False)
        elif action == IN_PLACE and changed:
            # Through symbolic links: rewrite the file, keep the link.
            real = Path(os.path.realpath(task.source))
            self._sweep(str(real.parent))
            read_as, raw = loaded.info, loaded.raw
            assert read_as is not None  # only standard input has no stat
            # Never over an edit made since the file was read (still_as_read).
            write_atomic(
                real,
                data,
                mode,
                durable=True,
                guard=lambda: still_as_read(real, read_as, raw),
            )
        if self.options.diff and changed:
            _write_stdout(unified_diff(loaded.source.text, output, task.name).encode())
        return True

    def _copy_verbatim(self, task: Task, info: Optional[os.stat_result]) -> None:
        assert task.destination is not None
        try:
            _refuse_overwriting_source(task)
            if info is None:
                info = _stat_source(task)
            mode = info.st_mode & 0o7777
            written = not same_file_copy(task.source, task.destination, mode)
            if written:
                copy_atomic(task.source, task.destination, mode)
        except TranspileError as exc:
            self._fail(task, exc.format())
            return
        except OSError as exc:
            # Failures to read the source come as TranspileErrors naming it
            # (copy_atomic, _stat_source): an OSError is about the copy.
            where = task.destination
            self._fail(task, f"{where}:1:1: error: {describe_write_error(exc)}")
            return
        if self.stat_cache is not None:
            self.stat_cache.record(
                task.absolute, info, destination=task.output, outcome=COPIED
            )
        self.reporter.copied(task.name, written=written)


def _load(task: Task, info: Optional[os.stat_result], *, from_stdin: bool) -> _Loaded:
    """Read and decode one source; raises TranspileError saying why not."""
    if from_stdin:
        # The bytes, undecoded: the source's coding declaration decides.
        stream = getattr(sys.stdin, "buffer", None)
        raw = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
        return _Loaded(task, raw, decode_source(raw, task.name, 0o644))
    raw, info = read_bytes(task.source, info)
    source = decode_source(raw, task.name, info.st_mode & 0o7777)
    return _Loaded(task, raw, source, info)


def _stat_source(task: Task) -> os.stat_result:
    try:
        return task.source.stat()
    except OSError as exc:
        raise TranspileError(describe_os_error(exc), filename=task.name) from None


def _stat_quietly(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except OSError:
        return None  # reported when the file is read


def _write_stdout(data: bytes) -> None:
    # Bytes in the source's own encoding, so a coding declaration stays true.
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        stream.write(data)
        stream.flush()


def _refuse_overwriting_source(task: Task) -> None:
    destination = task.destination
    if destination is not None and destination.exists():
        try:
            same = os.path.samefile(destination, task.source)
        except OSError:
            return  # the source cannot be read: reading it will say so
        if same:
            raise TranspileError(
                f"refusing to overwrite the source with its output ({destination})",
                filename=task.name,
            )
