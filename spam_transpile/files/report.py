"""What a run tells the user: per-file lines, a progress bar, the summary, the exit code.

Exit codes (documented in the README):

* 0 - everything went well (with ``--check``: nothing left to transpile);
* 1 - ``--check`` found files that would change;
* 2 - at least one file could not be handled (its error was printed as
  ``path:line:col: error: message``), or the command line was wrong.

Everything goes to standard error, so standard output carries only
transpiled code or diffs.
"""

from __future__ import annotations

import re
import time
from typing import Callable, Dict, List, Optional, TextIO

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_ERROR = 2


class Counters:
    # Not a dataclass: those are slow to create at import, and a rerun
    # served by the stat cache is mostly start-up.

    def __init__(
        self,
        transpiled: int = 0,
        unchanged: int = 0,
        copied: int = 0,
        failed: int = 0,
        matches: int = 0,
        without_match: int = 0,
        others_unchanged: int = 0,
    ) -> None:
        #: files whose lowered output was written (or would be, with --check)
        self.transpiled = transpiled
        #: files with match statements whose output was already up to date
        self.unchanged = unchanged
        #: Python files without a match statement (left as they are, or copied)
        self.without_match = without_match
        #: other files copied, and other files whose copy was up to date
        self.copied = copied
        self.others_unchanged = others_unchanged
        self.failed = failed
        self.matches = matches
        #: how many of each kind above came from the stat cache, unread
        self.cached: Dict[str, int] = {}
        self.would_change: List[str] = []


_MATCH_LINE = re.compile(r"[ \t\f]*match\b")


def count_lowered_matches(source: str, keep_lines_output: str) -> int:
    """How many match statements the keep-lines output lowered.

    That layout keeps every line in place and always rewrites the line that
    held ``match SUBJECT:``, so a line starting with ``match`` that changed
    is a lowered statement; one that stayed is ``match`` used as a name.
    """
    pairs = zip(source.splitlines(), keep_lines_output.splitlines())
    # A line that only gained statements (the module's helper) still holds
    # its own text.
    return sum(
        1
        for before, after in pairs
        if before not in after and _MATCH_LINE.match(before)
    )


def _other_files(count: int) -> str:
    return f"{count} other {'file' if count == 1 else 'files'}"


def _cached_note(counters: Counters, kind: str) -> str:
    cached, total = counters.cached.get(kind, 0), getattr(counters, kind)
    if not cached:
        return ""
    return " (cached)" if cached == total else f" ({cached} cached)"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def summary_line(counters: Counters, seconds: float, *, dry_run: bool) -> str:
    """One line: what happened to how many files, matches lowered, time.

    Only what happened is said: a file whose output was already up to date
    is "unchanged", not "transpiled"; one without a match statement is
    "without match statements"; "(cached)" marks counts the stat cache
    answered without opening the files.
    """
    verb = "would be transpiled" if dry_run else "transpiled"
    kinds = [
        ("transpiled", f"{_plural(counters.transpiled, 'file')} {verb}", True),
        ("unchanged", f"{counters.unchanged} unchanged", False),
        ("without_match", f"{counters.without_match} without match statements", False),
        ("copied", f"{_other_files(counters.copied)} copied", False),
        (
            "others_unchanged",
            f"{_other_files(counters.others_unchanged)} unchanged",
            False,
        ),
    ]
    parts = [
        text + _cached_note(counters, kind)
        for kind, text, always in kinds
        if always or getattr(counters, kind)
    ]
    parts.append(f"{counters.failed} failed")
    lowered = "to lower" if dry_run else "lowered"
    return (
        ", ".join(parts)
        + f"; {_plural(counters.matches, 'match statement')} {lowered} in {seconds:.2f} s"
    )


class ProgressBar:
    """A one-line bar on a terminal, redrawn at most ten times a second.

    It appears only after half a second, so short runs print nothing, and
    never when the stream is not a terminal (pipes, CI logs, pre-commit).

    Not ``click.progressbar``, which cannot serve here: it draws at once
    (no delay for short runs), prints its label even when the stream is not
    a terminal, and has no way to clear itself for the error and warning
    lines printed between two updates, which would then be drawn over.
    """

    WIDTH = 30
    DELAY = 0.5
    INTERVAL = 0.1

    def __init__(
        self, stream: TextIO, total: int, clock: Callable[[], float] = time.monotonic
    ):
        self.stream = stream
        self.total = total
        self.clock = clock
        self.started = clock()
        self.last_drawn: Optional[float] = None
        self.visible = False

    def update(self, done: int) -> None:
        now = self.clock()
        if now - self.started < self.DELAY:
            return
        if (
            self.last_drawn is not None
            and now - self.last_drawn < self.INTERVAL
            and done < self.total
        ):
            return
        self.last_drawn = now
        filled = self.WIDTH * done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {done}/{self.total} files")
        self.stream.flush()
        self.visible = True

    def clear(self) -> None:
        if self.visible:
            self.stream.write("\r" + " " * (self.WIDTH + 40) + "\r")
            self.stream.flush()
            self.visible = False


class Reporter:
    """Counts outcomes and prints them according to -q/-v."""

    def __init__(
        self,
        stream: TextIO,
        *,
        quiet: bool = False,
        verbose: bool = False,
        check: bool = False,
        dry_run: bool = False,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.stream = stream
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self.check = check
        self.dry_run = dry_run or check
        self.clock = clock
        self.started = clock()
        self.counters = Counters()
        self.show_summary = True
        self.progress: Optional[ProgressBar] = None
        self.done = 0

    # -- output -----------------------------------------------------------

    def _print(self, line: str) -> None:
        if self.progress is not None:
            self.progress.clear()
        self.stream.write(line + "\n")
        self.stream.flush()

    def note(self, line: str) -> None:
        """Shown with -v only."""
        if self.verbose:
            self._print(line)

    def error(self, line: str) -> None:
        """Always shown, even with -q."""
        self._print(line)

    def warning(self, line: str) -> None:
        """Shown unless -q; never changes the exit status."""
        if not self.quiet:
            self._print(line)

    def start_progress(self, total: int) -> None:
        if not self.quiet and total > 1 and _is_terminal(self.stream):
            self.progress = ProgressBar(self.stream, total)

    def _advance(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress.update(self.done)

    # -- outcomes ---------------------------------------------------------

    def _count(self, kind: str, cached: bool) -> None:
        setattr(self.counters, kind, getattr(self.counters, kind) + 1)
        if cached:
            self.counters.cached[kind] = self.counters.cached.get(kind, 0) + 1

    def transpiled(self, path: str, matches: int, *, cached: bool = False) -> None:
        self._count("transpiled", cached)
        self.counters.matches += matches
        if self.check:
            self.counters.would_change.append(path)
            if not self.quiet:
                self._print(f"would transpile {path}")
        else:
            self.note(f"transpiled {path} ({_plural(matches, 'match statement')})")
        self._advance()

    def unchanged(self, path: str, *, cached: bool = False) -> None:
        """A file with match statements whose output was already up to date."""
        self._count("unchanged", cached)
        self.note(f"unchanged {path}")
        self._advance()

    def without_match(self, path: str, *, cached: bool = False) -> None:
        self._count("without_match", cached)
        self.note(f"no match statement in {path}")
        self._advance()

    def copied(self, path: str, *, written: bool = True, cached: bool = False) -> None:
        self._count("copied" if written else "others_unchanged", cached)
        self.note(f"copied {path}" if written else f"unchanged copy of {path}")
        self._advance()

    def failed(self, formatted_error: str) -> None:
        self.counters.failed += 1
        self.error(formatted_error)
        self._advance()

    # -- the end ----------------------------------------------------------

    def finish(self) -> int:
        if self.progress is not None:
            self.progress.clear()
            self.progress = None
        if self.verbose or (self.show_summary and not self.quiet):
            elapsed = self.clock() - self.started
            self._print(summary_line(self.counters, elapsed, dry_run=self.dry_run))
        return self.exit_code()

    def exit_code(self) -> int:
        if self.counters.failed:
            return EXIT_ERROR
        if self.check and self.counters.transpiled:
            return EXIT_CHECK_FAILED
        return EXIT_OK


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
