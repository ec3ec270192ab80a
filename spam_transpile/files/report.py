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
from typing import Callable, List, Optional, TextIO

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
    ) -> None:
        self.transpiled = transpiled
        self.unchanged = unchanged
        self.copied = copied
        self.failed = failed
        self.matches = matches
        self.would_change: List[str] = []


_MATCH_LINE = re.compile(r"[ \t\f]*match\b")


def count_lowered_matches(source: str, keep_lines_output: str) -> int:
    """How many match statements the keep-lines output lowered.

    That layout keeps every line in place and always rewrites the line that
    held ``match SUBJECT:``, so a line starting with ``match`` that changed
    is a lowered statement; one that stayed is ``match`` used as a name.
    """
    pairs = zip(source.splitlines(), keep_lines_output.splitlines())
    return sum(
        1 for before, after in pairs if before != after and _MATCH_LINE.match(before)
    )


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def summary_line(counters: Counters, seconds: float, *, dry_run: bool) -> str:
    """One line: files transpiled / unchanged / failed, matches lowered, time."""
    verb = "would be transpiled" if dry_run else "transpiled"
    parts = [
        f"{_plural(counters.transpiled, 'file')} {verb}",
        f"{counters.unchanged} unchanged",
    ]
    if counters.copied:
        parts.append(
            f"{counters.copied} other {'file' if counters.copied == 1 else 'files'} copied"
        )
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

    def transpiled(self, path: str, matches: int) -> None:
        self.counters.transpiled += 1
        self.counters.matches += matches
        if self.check:
            self.counters.would_change.append(path)
            if not self.quiet:
                self._print(f"would transpile {path}")
        else:
            self.note(f"transpiled {path} ({_plural(matches, 'match statement')})")
        self._advance()

    def unchanged(self, path: str) -> None:
        self.counters.unchanged += 1
        self.note(f"unchanged {path}")
        self._advance()

    def copied(self, path: str) -> None:
        self.counters.copied += 1
        self.note(f"copied {path}")
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
