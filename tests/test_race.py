"""Files edited or deleted while ``--in-place`` runs are left as the user left them.

An in-place run reads every source before it writes any. Each test stops a
real run just before its first rename (a test-only stopping point), changes
files under it the way people and editors do, lets it go on, and checks
that the changed files are untouched and reported, and every other file is
still transpiled.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Dict, Tuple

import pytest

from tests.runs import (
    make_tree,
    plain,
    run,
    snapshot,
    source,
    start,
    temporaries,
    wait_for,
)

# Every test here runs real processes for a second or more.
pytestmark = pytest.mark.slow

FILES = {
    "pkg/a.py": source(1).encode(),
    "pkg/b.py": source(2, functions=2).encode(),
    "pkg/c.py": source(3).encode(),
    "pkg/sub/d.py": source(4, functions=3).encode(),
    "pkg/sub/e.py": source(5).encode(),
    "pkg/plain.py": plain(6).encode(),
}


def edit(path: Path) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("# edited while the run was going\n")


def delete(path: Path) -> None:
    path.unlink()


def keep_size_and_time(path: Path) -> None:
    # Same length, same modification time: only the bytes tell.
    info = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"return None", b"return Nada"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def save_as_editors_do(path: Path) -> None:
    # Write a new file beside it and rename it over: a new inode.
    fresh = path.with_name(path.name + ".swp")
    fresh.write_bytes(path.read_bytes() + b"VALUE = 1\n")
    os.replace(fresh, path)


CHANGES: Dict[str, Tuple[Callable[[Path], None], str]] = {
    "edited": (edit, "changed during the run"),
    "deleted": (delete, "deleted during the run"),
    "same-size-and-time": (keep_size_and_time, "changed during the run"),
    "saved-by-rename": (save_as_editors_do, "changed during the run"),
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Dict[str, bytes]:
    """The tree after an undisturbed in-place run."""
    root = make_tree(tmp_path_factory.mktemp("reference"), FILES)
    done = run(["pkg", "--in-place", "-j", "1"], cwd=root, cache=cache)
    assert done.returncode == 0, done.stderr
    return snapshot(root / "pkg")


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_files_changed_during_the_run_are_left_alone_and_reported(
    tmp_path: Path, cache: Path, expected: Dict[str, bytes], change: str, jobs: str
) -> None:
    make_tree(tmp_path, FILES)
    signal, resume = tmp_path / "stopped", tmp_path / "go on"
    hook = {"point": "write-done", "signal": str(signal), "resume": str(resume)}
    process = start(
        ["pkg", "--in-place", "-j", jobs], cwd=tmp_path, cache=cache, hook=hook
    )
    assert wait_for(signal, process), process.communicate()
    # The file being written right now, and one not yet written.
    root = (tmp_path / "pkg").resolve()
    current = Path(signal.read_text("utf-8")).resolve()
    later = next(root / name for name in ("c.py", "a.py") if root / name != current)
    apply, message = CHANGES[change]
    for path in (current, later):
        apply(path)
    left = snapshot(tmp_path / "pkg")
    resume.touch()
    _, stderr = process.communicate(timeout=120)
    errors = stderr.decode()

    assert process.returncode == 2, errors
    after = snapshot(tmp_path / "pkg")
    changed = {path.relative_to(root).as_posix() for path in (current, later)}
    for name in changed:
        assert after.get(name) == left.get(name), f"{name} was overwritten"
        shown = os.path.join("pkg", *name.split("/"))
        assert f"{shown}: error: {message}" in errors
    for name, data in expected.items():
        if name not in changed:
            assert after[name] == data, f"{name} was not transpiled"
    assert set(after) == set(expected) - {name for name in changed if name not in left}
    assert temporaries(tmp_path) == []
    assert "Traceback" not in errors


def test_a_run_without_changes_still_succeeds(
    tmp_path: Path, cache: Path, expected: Dict[str, bytes]
) -> None:
    # The check before each rename must not refuse files nobody touched.
    make_tree(tmp_path, FILES)
    done = run(["pkg", "--in-place", "-j", "2"], cwd=tmp_path, cache=cache)
    assert done.returncode == 0, done.stderr
    assert snapshot(tmp_path / "pkg") == expected


def test_a_changed_file_is_transpiled_by_the_next_run(
    tmp_path: Path, cache: Path
) -> None:
    make_tree(tmp_path, FILES)
    signal, resume = tmp_path / "stopped", tmp_path / "go on"
    hook = {"point": "write-done", "signal": str(signal), "resume": str(resume)}
    process = start(
        ["pkg", "--in-place", "-j", "1"], cwd=tmp_path, cache=cache, hook=hook
    )
    assert wait_for(signal, process)
    current = Path(signal.read_text("utf-8"))
    edit(current)
    resume.touch()
    process.communicate(timeout=120)
    assert process.returncode == 2
    again = run(["pkg", "--in-place", "-j", "1"], cwd=tmp_path, cache=cache)
    assert again.returncode == 0, again.stderr
    text = current.read_text("utf-8")
    assert "match value:" not in text and "# edited while the run was going" in text
