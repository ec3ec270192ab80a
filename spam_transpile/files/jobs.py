"""Work done in worker processes: one job per file that needs the
transpiler, run in a process pool and handed back in input order (used by
:mod:`.runner`)."""

from __future__ import annotations

import os
import time
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

from spam_transpile.errors import NotInstalled, TranspileError, TranspileWarning
from spam_transpile.files.testhooks import checkpoint

# Everything here must pickle. Records are NamedTuples or plain classes, not dataclasses: each dataclass
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
    #: readable layout: (path, digest) of each file whose declarations the
    #: output relies on ("" where the file was looked for and not there)
    consulted: Tuple[Tuple[str, str], ...] = ()


def transpile_with_warnings(
    source: str, *, target: str, filename: str
) -> Tuple[str, List[TranspileWarning]]:
    # Imported on first use: LibCST is slow to import, and a run served from
    # the cache never needs it.
    from spam_transpile.pipeline import transpile_with_warnings as lower

    return lower(source, target=target, filename=filename)


def transpile_readable(
    source: str, *, target: str, filename: str
) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    """The readable layout, with what the other modules of the file's
    project declare; and the files that came from, each with its digest."""
    from spam_transpile.pipeline import transpile

    project = _project()
    output = transpile(
        source, target=target, filename=filename, layout="readable", project=project
    )
    return output, tuple(sorted(project.consulted(filename).items()))


_PROJECTS: List[Any] = []


def _project() -> Any:
    """One reader of project files per process: a file several modules
    import is parsed once (again only when its digest changes)."""
    if not _PROJECTS:
        from spam_transpile.lowering.project_facts import ProjectFacts

        _PROJECTS.append(ProjectFacts())
    return _PROJECTS[0]


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
        consulted: Tuple[Tuple[str, str], ...] = ()
        if job.layout == "readable" and keep_lines != job.text:
            final, consulted = transpile_readable(
                job.text, target=job.target, filename=job.filename
            )
    except TranspileError as exc:
        return TranspileOutcome(keep_lines, None, exc.format(), warnings=found)
    except Exception as exc:
        return TranspileOutcome(keep_lines, None, _unexpected(job, exc), warnings=found)
    return TranspileOutcome(
        keep_lines, final, None, warnings=found, consulted=consulted
    )


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
