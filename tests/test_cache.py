"""The caches remember what the source alone decides, under a key holding
everything else that decides it (:mod:`spam_transpile.files.cache`,
:mod:`spam_transpile.files.statcache`): never an error of the environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

from spam_transpile.errors import NotInstalled, TranspileError
from spam_transpile.files.cache import Cache, options_key
from spam_transpile.files.statcache import StatCache

ROOT = Path(__file__).resolve().parent.parent

SOURCE = """\
def f(x):
    match x:
        case [a, b]:
            return a + b
        case _:
            return None
"""

# The command line, in a process where ``import black`` fails.
WITHOUT_BLACK = (
    "import sys; sys.modules['black'] = None; "
    "from spam_transpile.cli import main; main()"
)


def _cli(
    args: Sequence[str], cache: Path, *, black: bool
) -> subprocess.CompletedProcess:
    prefix = ["-c", WITHOUT_BLACK] if not black else ["-m", "spam_transpile"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPAM_TRANSPILE_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, *prefix, *args, "-j", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.slow
def test_a_missing_black_is_not_remembered(tmp_path: Path) -> None:
    """``--in-place`` without black fails; once black is there the same run
    succeeds, and so does ``-o`` (keep-lines, which never needed black) in
    between: the cache kept the keep-lines output, not the error."""
    cache = tmp_path / "cache"
    source = tmp_path / "app.py"
    source.write_text(SOURCE)

    failed = _cli(["--in-place", str(source)], cache, black=False)
    assert failed.returncode == 2
    assert "the readable layout needs black" in failed.stderr
    assert source.read_text() == SOURCE

    kept = _cli([str(source), "-o", str(tmp_path / "out.py")], cache, black=False)
    assert kept.returncode == 0, kept.stderr
    assert "match x" not in (tmp_path / "out.py").read_text()

    done = _cli(["--in-place", str(source)], cache, black=True)
    assert done.returncode == 0, done.stderr
    rewritten = source.read_text()
    assert "match x" not in rewritten and "subject" not in rewritten
    assert "        isinstance(x, (list, tuple, Sequence))\n" in rewritten


@pytest.mark.slow
def test_only_errors_about_the_source_are_remembered(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    broken = tmp_path / "broken.py"
    broken.write_text("match x:\n    case 1 | y:\n        pass\n")
    first = _cli([str(broken), "-o", str(tmp_path / "out.py")], cache, black=True)
    assert first.returncode == 2 and "alternative patterns bind different names" in (
        first.stderr
    )
    store = Cache(options_key("3.9"), cache)
    entry = store.lookup(broken.read_bytes())
    assert entry is not None and entry.error is not None
    assert entry.error[0] == "alternative patterns bind different names"


def test_keys_hold_what_decides_the_output(tmp_path: Path) -> None:
    key = options_key("3.8")
    assert "layout=keep-lines" in key and "target=3.8" in key
    assert "python=%d.%d" % sys.version_info[:2] in key
    assert options_key("3.7") != key
    paths = {
        StatCache.for_run(
            action="write",
            target="3.9",
            layout=layout,
            output=None,
            directory=tmp_path,
        ).path
        for layout in ("keep-lines", "readable")
    }
    assert len(paths) == 2


def test_not_installed_is_a_transpile_error_that_crosses_processes() -> None:
    import pickle

    error = NotInstalled("black is missing", filename="a.py", lineno=1, offset=1)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is NotInstalled and isinstance(again, TranspileError)
    assert again.format() == "a.py:1:1: error: black is missing"
    plain = pickle.loads(pickle.dumps(TranspileError("x", filename="b.py")))
    assert type(plain) is TranspileError


@pytest.mark.parametrize("layout", ["readable", "keep-lines"])
def test_the_stat_cache_of_the_readable_layout_knows_black(
    layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another black lays the readable layout out otherwise: its runs get
    another stat cache; keep-lines runs do not depend on it."""
    from spam_transpile.files import statcache

    def path() -> Path:
        return StatCache.for_run(
            action="write", target="3.9", layout=layout, output=None, directory=tmp_path
        ).path

    before = path()
    monkeypatch.setattr(statcache, "_black_version", lambda: "0.0-other")
    assert (path() != before) is (layout == "readable")
