"""The ``spam-transpile`` command: files, folders and standard input.

``spam-transpile FILE`` prints the result, ``spam-transpile FILE -o OUT``
writes it, ``spam-transpile DIR -o OUT`` mirrors a folder into a runnable
copy, ``--in-place`` rewrites sources, ``--check`` and ``--diff`` only look.

A run has two phases. First, in this process, files whose source and
output have the stats the last run left them with are counted as before,
unread (:mod:`spam_transpile.files.statcache`); every other file is read once, and
files that cannot hold a match statement and files found in the cache are
settled at once (a cheap regex, no parse). Then the files that really need
the transpiler go to a pool of worker processes, and each result is written
as it comes back. Exit codes are in :mod:`spam_transpile.files.report`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
)

import click
from click.core import ParameterSource

from spam_transpile import __version__
from spam_transpile.files.cache import Cache, options_key
from spam_transpile.files.config import (
    NO_PROJECT,
    ConfigError,
    Project,
    find_project_root,
    find_pyproject,
    load_project,
    resolve_target,
)
from spam_transpile.errors import NotInstalled, TranspileError, TranspileWarning
from spam_transpile.files.discover import (
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    STDIN,
    Filters,
    Plan,
    Task,
    UsageProblem,
    make_plan,
)
from spam_transpile.syntax.prescan import may_hold_match
from spam_transpile.files.report import EXIT_ERROR, Reporter, count_lowered_matches
from spam_transpile.settings import SUPPORTED_TARGETS
from spam_transpile.files.statcache import COPIED, PLAIN, TRANSPILED, StatCache
from spam_transpile.files.testhooks import checkpoint
from spam_transpile.files.write import (
    LAYOUTS,
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


# --------------------------------------------------------------------------
# Work done in worker processes (everything here must pickle)
# --------------------------------------------------------------------------

# Records are NamedTuples or plain classes, not dataclasses: each dataclass
# takes about half a millisecond to create at import, and a rerun served by
# the stat cache is mostly start-up.


class TranspileJob(NamedTuple):
    filename: str
    text: str
    target: str
    layout: str
    #: the keep-lines output from the cache, when only the layout is left to do
    cached: Optional[str] = None


class TranspileOutcome(NamedTuple):
    #: output in the keep-lines layout (what the cache holds)
    keep_lines: Optional[str]
    #: output in the requested layout (what is written)
    final: Optional[str]
    error: Optional[str]
    #: (message, line, column) of an error the source itself causes, which
    #: the cache can remember; None for internal errors
    cacheable_error: Optional[Tuple[str, int, int]] = None
    #: (message, line, column) of each warning (unreachable cases)
    warnings: Tuple[Tuple[str, int, int], ...] = ()


def transpile_with_warnings(
    source: str, *, target: str, filename: str
) -> Tuple[str, List[TranspileWarning]]:
    # Imported on first use: LibCST is slow to import, and a run served from
    # the cache never needs it.
    from spam_transpile.pipeline import transpile_with_warnings as lower

    return lower(source, target=target, filename=filename)


def transpile_readable(source: str, *, target: str, filename: str) -> str:
    from spam_transpile.pipeline import transpile

    return transpile(source, target=target, filename=filename, layout="readable")


def run_job(job: TranspileJob) -> TranspileOutcome:
    """Transpile one source; never raises, so one bad file cannot stop a run.

    The cache holds what the keep-lines transpile of the source gives, an
    output or an error about the source (``cacheable_error``). The readable
    layout is made from the source each time, with the black installed:
    its errors, like every error of the environment, are not remembered.
    """
    checkpoint("transpile", job.filename)  # where a test can hold one file back
    found: Tuple[Tuple[str, int, int], ...] = ()
    keep_lines = job.cached
    try:
        if keep_lines is None:
            keep_lines, warnings = transpile_with_warnings(
                job.text, target=job.target, filename=job.filename
            )
            found = tuple((w.msg, w.lineno, w.offset) for w in warnings)
    except NotInstalled as exc:
        return TranspileOutcome(None, None, exc.format())
    except TranspileError as exc:
        where = (exc.msg, exc.lineno or 1, exc.offset or 1)
        return TranspileOutcome(None, None, exc.format(), where)
    except Exception as exc:
        return TranspileOutcome(None, None, _unexpected(job, exc))
    try:
        final = keep_lines
        if job.layout == "readable" and keep_lines != job.text:
            final = transpile_readable(
                job.text, target=job.target, filename=job.filename
            )
    except TranspileError as exc:
        return TranspileOutcome(keep_lines, None, exc.format(), warnings=found)
    except Exception as exc:
        return TranspileOutcome(keep_lines, None, _unexpected(job, exc), warnings=found)
    return TranspileOutcome(keep_lines, final, None, warnings=found)


def _unexpected(job: TranspileJob, exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        message = "source too deeply nested to transpile"
    else:  # a bug in the transpiler: report it, keep going
        message = f"internal error ({type(exc).__name__}: {exc}); please report this"
    return f"{job.filename}:1:1: error: {message}"


#: a job's position in the list given to run_jobs, and how it went
Numbered = Tuple[int, TranspileOutcome]


def run_jobs(jobs: Sequence[TranspileJob], workers: int) -> Iterator[Numbered]:
    """(index, outcome) of each job as soon as it is done, from a pool when it pays.

    Finished first, handed over first: with the biggest files started first,
    input order would hold every small result back behind them, and a run
    killed meanwhile would lose them all.
    """
    if workers <= 1 or len(jobs) <= 1:
        yield from enumerate(map(run_job, jobs))
        return
    # Imported here: multiprocessing is slow to import, and most reruns
    # transpile nothing.
    from concurrent.futures import ProcessPoolExecutor, as_completed

    try:
        executor = ProcessPoolExecutor(
            max_workers=min(workers, len(jobs)), initializer=end_with_parent
        )
    except (OSError, NotImplementedError, ImportError):
        # No multiprocessing here (some sandboxes, AWS Lambda): one process.
        yield from enumerate(map(run_job, jobs))
        return
    try:
        # Biggest files first, so one large file does not start last and
        # keep a single worker busy after the others are done.
        order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i].text))
        futures = {executor.submit(run_job, jobs[index]): index for index in order}
        for future in as_completed(futures):
            yield futures[future], future.result()
    except BaseException:
        # Ctrl-C: do not wait for the queued files.
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown()


def end_with_parent() -> None:
    """Pool initializer: the worker exits once the process that made it is gone.

    A run killed by SIGKILL cannot shut its pool down, and its workers
    would otherwise wait for work forever.
    """
    import threading

    parent = os.getppid()  # the run, or the forkserver that dies with it

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


def in_input_order(outcomes: Iterable[Numbered]) -> Iterator[Numbered]:
    """``outcomes`` again, each held back until those before it have come."""
    early: Dict[int, TranspileOutcome] = {}
    following = 0
    for index, outcome in outcomes:
        early[index] = outcome
        while following in early:
            yield following, early.pop(following)
            following += 1


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------


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

    __slots__ = ("task", "raw", "source", "info", "warnings")

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


# --------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------

#: options a [tool.spam-transpile] table may set
CONFIGURABLE = (
    "target",
    "layout",
    "include",
    "exclude",
    "extend_exclude",
    "force_exclude",
    "gitignore",
    "jobs",
    "quiet",
    "verbose",
    "cache",
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write results here: a file for one input file, else a folder that "
    "becomes a runnable mirror of the inputs.",
)
@click.option("-i", "--in-place", is_flag=True, help="Rewrite the given files.")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and list the files that would change.",
)
@click.option("--diff", is_flag=True, help="Write nothing; print a unified diff.")
@click.option(
    "--target",
    type=click.Choice(sorted(SUPPORTED_TARGETS)),
    help="Oldest Python version the output must run on [default: target in "
    "[tool.spam-transpile], else the oldest that [project] requires-python "
    "allows, else 3.9].",
)
@click.option(
    "--layout",
    type=click.Choice(LAYOUTS),
    help="keep-lines: every line keeps its number (default, except with "
    "--in-place and --diff); readable: generated code laid out for people "
    "(default with --in-place, and with --diff, which previews --in-place).",
)
@click.option(
    "--include",
    metavar="GLOB",
    multiple=True,
    default=DEFAULT_INCLUDE,
    show_default=True,
    help="Glob of files to transpile inside folders (repeatable).",
)
@click.option(
    "--exclude",
    metavar="GLOB",
    multiple=True,
    default=DEFAULT_EXCLUDE,
    help="Glob of files and folders to skip (repeatable; replaces the "
    "defaults: .git, virtual environments, build, __pycache__, ...).",
)
@click.option(
    "--extend-exclude",
    multiple=True,
    metavar="GLOB",
    help="Glob to skip on top of --exclude (repeatable).",
)
@click.option(
    "--force-exclude",
    multiple=True,
    metavar="GLOB",
    help="Glob to skip even for files named on the command line (repeatable).",
)
@click.option(
    "--gitignore/--no-gitignore",
    default=True,
    show_default=True,
    help="Skip what .gitignore files (the project root's and below) ignore, "
    "in folders given.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    help="Worker processes [default: all cores].",
)
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Print every file and the settings used."
)
@click.option(
    "--cache/--no-cache",
    default=True,
    show_default=True,
    help="Reuse results for unchanged files (keyed by content, version and target).",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read settings from this TOML file instead of the nearest pyproject.toml.",
)
@click.option(
    "--stdin-filename",
    help="Name for standard input in messages and for finding pyproject.toml.",
)
@click.version_option(__version__, prog_name="spam-transpile")
@click.pass_context
def main(ctx: click.Context, paths: Tuple[str, ...], **options: Any) -> None:
    """Lower the match statements in PATH... to code older Pythons can run.

    PATH may be files, folders, or - for standard input. Exit status: 0 ok,
    1 --check found files to transpile, 2 errors.
    """
    # Before any file is looked at: the stat cache trusts only files last
    # changed well before this moment.
    started_ns = time.time_ns()
    try:
        project = _apply_config(ctx, paths, options)
    except ConfigError as exc:
        click.echo(exc.format(), err=True)
        sys.exit(EXIT_ERROR)
    config_path = project.path
    run_options = _run_options(paths, options)
    reporter = Reporter(
        sys.stderr,
        quiet=options["quiet"],
        verbose=options["verbose"],
        check=options["check"],
        dry_run=run_options.action == CHECK,
    )
    plan = _plan(paths, options, config_path, run_options)
    # The one-file forms (`FILE`, `FILE -o OUT`, `-`) stay as quiet as they
    # always were: the output, or an error, and nothing else.
    one_file = plan.stdin or (len(paths) == 1 and not os.path.isdir(paths[0]))
    reporter.show_summary = not (one_file and run_options.action in (PRINT, WRITE))
    cache = Cache(options_key(run_options.target)) if options["cache"] else None
    stat_cache = _stat_cache(options, run_options, plan, started_ns)
    _describe_settings(reporter, project, options, cache, stat_cache, run_options)
    try:
        Runner(run_options, reporter, cache, stat_cache).run(
            plan, options["stdin_filename"] or "<stdin>"
        )
    except KeyboardInterrupt:
        reporter.error("interrupted; files already written are complete")
        sys.exit(130)
    finally:
        # Also after Ctrl-C: what was recorded is true of the files.
        if stat_cache is not None:
            stat_cache.save()
    sys.exit(reporter.finish())


def _apply_config(
    ctx: click.Context, paths: Sequence[str], options: Dict[str, Any]
) -> Project:
    """Fill options not given on the command line from the configuration file.

    The target is resolved as for every entry point: the command line, else
    the file's ``target``, else the oldest Python ``requires-python`` allows.
    """
    config_path = options["config"]
    if config_path is None:
        anchors = [
            (options["stdin_filename"] or STDIN) if p == STDIN else p for p in paths
        ]
        config_path = find_pyproject(anchors)
    project = load_project(config_path) if config_path is not None else NO_PROJECT
    params = {param.name: param for param in ctx.command.params}
    for name, value in project.settings.items():
        if name == "target":
            continue  # resolved below, with requires-python
        if name not in CONFIGURABLE:
            raise project.error(f"option {name!r} cannot be set in a file", name)
        if _given(ctx, name):
            continue  # the command line wins
        options[name] = _cast(ctx, params[name], project, name, value)
    explicit = options["target"] if _given(ctx, "target") else None
    target = resolve_target(project, explicit=explicit, explicit_from="--target")
    options["target"], options["target_reason"] = target
    return project


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)


def _cast(
    ctx: click.Context, param: click.Parameter, project: Project, name: str, value: Any
) -> Any:
    if param.multiple and isinstance(value, str):
        value = [value]
    try:
        return param.type_cast_value(ctx, value)
    except click.BadParameter as exc:
        raise project.error(f"option {name!r}: {exc.message}", name) from None


def _run_options(paths: Sequence[str], options: Dict[str, Any]) -> RunOptions:
    if not paths:
        raise click.UsageError(
            "give one or more files or folders, or - for standard input"
        )
    if options["in_place"] and options["output"] is not None:
        raise click.UsageError("--in-place and -o/--output cannot be used together")
    looking = options["check"] or options["diff"]
    if looking and (options["in_place"] or options["output"] is not None):
        raise click.UsageError("--check and --diff write nothing; drop -o/--in-place")
    if options["in_place"] and STDIN in paths:
        raise click.UsageError("standard input cannot be rewritten in place")
    if options["output"] is not None:
        action = WRITE
    elif options["in_place"]:
        action = IN_PLACE
    elif looking:
        action = CHECK
    else:
        action = PRINT
        if len(paths) > 1 or any(os.path.isdir(p) for p in paths):
            raise click.UsageError(
                "several files or a folder: choose -o OUT, --in-place, --check or --diff"
            )
    # --diff previews what --in-place would write, as black's --diff does.
    previews = action == IN_PLACE or (action == CHECK and options["diff"])
    layout = options["layout"] or ("readable" if previews else "keep-lines")
    return RunOptions(
        action=action,
        diff=options["diff"],
        target=options["target"],
        layout=layout,
        workers=options["jobs"] or _all_cores(),
    )


def _all_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _plan(
    paths: Sequence[str],
    options: Dict[str, Any],
    config_path: Optional[Path],
    run_options: RunOptions,
) -> Plan:
    if config_path is not None:
        root = config_path.parent.absolute()
    else:
        root = find_project_root([p for p in paths if p != STDIN])
    filters = Filters(
        root=root,
        include=tuple(options["include"]),
        exclude=tuple(options["exclude"]),
        extend_exclude=tuple(options["extend_exclude"]),
        force_exclude=tuple(options["force_exclude"]),
        gitignore=options["gitignore"],
    )
    try:
        return make_plan(
            paths, options["output"], filters, mirror_others=run_options.action == WRITE
        )
    except UsageProblem as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def _stat_cache(
    options: Dict[str, Any], run_options: RunOptions, plan: Plan, started_ns: int
) -> Optional[StatCache]:
    """The stat cache for this run, loaded; None when it cannot vouch for the output."""
    # Printing a result (standard output, --diff) needs the file's text, and
    # standard input has no stat.
    if (
        not options["cache"]
        or plan.stdin
        or run_options.diff
        or run_options.action == PRINT
    ):
        return None
    stat_cache = StatCache.for_run(
        action=run_options.action,
        target=run_options.target,
        layout=run_options.layout,
        output=options["output"],
        started_ns=started_ns,
    )
    stat_cache.load()
    return stat_cache


def _describe_settings(
    reporter: Reporter,
    project: Project,
    given: Dict[str, Any],
    cache: Optional[Cache],
    stat_cache: Optional[StatCache],
    options: RunOptions,
) -> None:
    reporter.note(f"configuration: {project.describe()}")
    reporter.note(f"target {options.target} from {given['target_reason']}")
    reporter.note(f"cache: {cache.directory if cache else 'off'}")
    reporter.note(f"stat cache: {stat_cache.path if stat_cache else 'off'}")
    reporter.note(
        f"target {options.target}, layout {options.layout}, up to {options.workers} workers"
    )
