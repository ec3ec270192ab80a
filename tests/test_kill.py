"""SIGKILL at random points of ``--in-place`` and ``-o`` runs loses nothing.

Each kill point starts a real run over a tree and kills it with its
workers, either at a write stopping point (a temporary file just created,
half written, complete but not renamed, or just renamed; see
:mod:`spam_transpile.files.testhooks`) or after a random delay. Then every
file must be whole, byte for byte its old or its new content, and the next
run must remove the temporary files the killed one left, copy none of them,
and complete the tree.

The points are drawn from a fixed seed. ``SPAM_TRANSPILE_KILL_POINTS``
(default 24) and ``SPAM_TRANSPILE_KILL_SEED`` change them; for long runs
with a tally use ``scripts/kill_test.py``.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import pytest

from spam_transpile.files.jobs import in_input_order
from spam_transpile.files.write import is_temporary_name
from tests.runs import (
    kill,
    make_tree,
    plain,
    run,
    snapshot,
    source,
    start,
    temporaries,
    wait_for,
)

KILL_POINTS = int(os.environ.get("SPAM_TRANSPILE_KILL_POINTS", "24"))
SEED = os.environ.get("SPAM_TRANSPILE_KILL_SEED", "issue-10")
WRITE_POINTS = ("write-created", "write-half", "write-done", "write-replaced")
# keep-lines: the readable layout runs black on every file, which would
# make each kill point several times slower (test_race covers it).
IN_PLACE = ["pkg", "--in-place", "--layout", "keep-lines"]
OUTPUT = ["pkg", "-o", "out"]


def _tree_a() -> Dict[str, bytes]:
    files = {"pkg/__init__.py": plain(0).encode()}
    for number in range(1, 9):
        files[f"pkg/m{number}.py"] = source(number, functions=number % 4 + 1).encode()
    for number in range(1, 4):
        files[f"pkg/sub/s{number}.py"] = source(10 + number).encode()
    files["pkg/plain1.py"] = plain(1).encode()
    files["pkg/plain2.py"] = plain(2).encode()
    files["pkg/data.txt"] = b"some data\n" * 500
    files["pkg/sub/table.csv"] = b"a,b\n1,2\n"
    return files


def _tree_b() -> Dict[str, bytes]:
    """Version A edited: some modules changed, a data file changed, files added."""
    files = _tree_a()
    for number in (1, 3, 5, 7):
        files[f"pkg/m{number}.py"] = source(100 + number, functions=3).encode()
    files["pkg/sub/s2.py"] = source(200, functions=2).encode()
    files["pkg/plain1.py"] = plain(300).encode()
    files["pkg/data.txt"] = b"other data\n" * 700
    files["pkg/new.py"] = source(400, functions=2).encode()
    files["pkg/sub/new.dat"] = bytes(range(256)) * 8
    return files


class Trees(NamedTuple):
    """What a complete run makes of the trees, and how long it takes."""

    cache: Path
    old_sources: Dict[str, bytes]
    #: the tree to run on, as written ("pkg/...")
    sources: Dict[str, bytes]
    #: the same, as a snapshot of pkg
    source_files: Dict[str, bytes]
    in_place: Dict[str, bytes]
    old_output: Dict[str, bytes]
    output: Dict[str, bytes]
    seconds: float


def build_trees(root: Path) -> Trees:
    cache = root / "cache"
    sources, old_sources = _tree_b(), _tree_a()
    in_place = make_tree(root / "in-place", sources)
    _complete(IN_PLACE, in_place, cache)
    old = make_tree(root / "old", old_sources)
    _complete(OUTPUT, old, cache)
    new = make_tree(root / "new", sources)
    shutil.copytree(old / "out", new / "out")
    began = time.monotonic()
    _complete(OUTPUT, new, cache)
    # Only to spread the timed kills over a run (the cache is warm by now).
    seconds = time.monotonic() - began
    return Trees(
        cache=cache,
        old_sources=old_sources,
        sources=sources,
        source_files={name[len("pkg/") :]: data for name, data in sources.items()},
        in_place=snapshot(in_place / "pkg"),
        old_output=snapshot(old / "out"),
        output=snapshot(new / "out"),
        seconds=seconds,
    )


def _complete(args: List[str], cwd: Path, cache: Path) -> str:
    done = run([*args, "-j", "2"], cwd=cwd, cache=cache)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


class KillPoint(NamedTuple):
    mode: str  # "in-place" or "output"
    jobs: str
    cache: bool
    #: a write stopping point and its count, or None for a timed kill
    point: Optional[str]
    nth: int
    delay: float

    @classmethod
    def draw(cls, trees: Trees, index: int) -> "KillPoint":
        rng = random.Random(f"{SEED}-{index}")
        mode = ("in-place", "output")[index % 2]
        writes = _writes(trees, mode)
        timed = rng.random() < 0.3
        return cls(
            mode=mode,
            jobs=rng.choice(("1", "2")),
            cache=rng.random() < 0.75,
            point=None if timed else rng.choice(WRITE_POINTS),
            nth=rng.randint(1, writes),
            delay=rng.uniform(0.0, trees.seconds * 1.2),
        )


def _writes(trees: Trees, mode: str) -> int:
    """How many files a complete run writes."""
    if mode == "in-place":
        return sum(trees.source_files[n] != d for n, d in trees.in_place.items())
    return sum(trees.old_output.get(n) != d for n, d in trees.output.items())


def kill_point(trees: Trees, index: int, work: Path) -> Dict[str, object]:
    """Run, kill and recover once; asserts, and returns what happened."""
    plan = KillPoint.draw(trees, index)
    make_tree(work, trees.sources)
    if plan.mode == "output":
        make_tree(work / "out", trees.old_output)
    target = work / ("pkg" if plan.mode == "in-place" else "out")
    args = list(IN_PLACE if plan.mode == "in-place" else OUTPUT)
    args += ["-j", plan.jobs] + ([] if plan.cache else ["--no-cache"])
    reached = _run_and_kill(plan, args, work, trees.cache)

    old = trees.source_files if plan.mode == "in-place" else trees.old_output
    new = trees.in_place if plan.mode == "in-place" else trees.output
    left = temporaries(work)
    whole = {n: d for n, d in snapshot(target).items() if not _ours(n)}
    changed = _check_whole(whole, old, new)
    if plan.mode == "output":
        assert snapshot(work / "pkg") == trees.source_files, "sources touched"

    again = run(args, cwd=work, cache=trees.cache)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    assert snapshot(target) == new  # complete, and no leftover copied into it
    assert temporaries(work) == []
    for path in left:
        assert Path(path).name in again.stderr  # each removal is reported
    return {
        "mode": plan.mode,
        "kill": plan.point or "timed",
        "reached": reached,
        "leftovers": len(left),
        "new files": changed,
    }


def _run_and_kill(plan: KillPoint, args: List[str], work: Path, cache: Path) -> bool:
    """Start the run and SIGKILL it; False if it ended before the kill point."""
    signal = work / "stopped"
    hook = None
    if plan.point is not None:
        hook = {"point": plan.point, "nth": plan.nth, "signal": str(signal)}
    process = start(args, cwd=work, cache=cache, hook=hook)
    if plan.point is not None:
        reached = wait_for(signal, process)
    else:
        time.sleep(plan.delay)
        reached = process.poll() is None
    kill(process)
    signal.unlink(missing_ok=True)
    return reached


def _ours(name: str) -> bool:
    return is_temporary_name(name.rsplit("/", 1)[-1])


def _check_whole(
    files: Dict[str, bytes], old: Dict[str, bytes], new: Dict[str, bytes]
) -> int:
    """Every file is its old or its new content; returns how many are new."""
    assert set(files) <= set(new), set(files) - set(new)
    assert set(old) <= set(files), "a file disappeared"
    for name, data in files.items():
        assert data in (old.get(name), new[name]), f"{name} is neither old nor new"
    return sum(1 for name, data in files.items() if data == new[name] != old.get(name))


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Trees:
    return build_trees(tmp_path_factory.mktemp("trees"))


@pytest.mark.slow
@pytest.mark.parametrize("index", range(KILL_POINTS))
def test_a_killed_run_leaves_whole_files_and_the_next_run_cleans_up(
    trees: Trees, index: int, tmp_path: Path
) -> None:
    kill_point(trees, index, tmp_path)


@pytest.mark.slow
def test_leftovers_among_the_inputs_are_removed_and_never_copied(
    trees: Trees, tmp_path: Path
) -> None:
    make_tree(tmp_path, trees.sources)
    signal = tmp_path / "stopped"
    hook = {"point": "write-half", "nth": 2, "signal": str(signal)}
    process = start([*IN_PLACE, "-j", "1"], cwd=tmp_path, cache=trees.cache, hook=hook)
    assert wait_for(signal, process)
    kill(process)
    (left,) = temporaries(tmp_path)
    done = run(["pkg", "-o", "out", "-j", "1"], cwd=tmp_path, cache=trees.cache)
    assert done.returncode == 0, done.stderr
    assert f"{Path(left).name}: warning: removed the temporary file" in done.stderr
    assert temporaries(tmp_path) == []
    assert set(snapshot(tmp_path / "out")) == set(trees.output)


@pytest.mark.slow
def test_a_running_run_keeps_its_temporary_files(trees: Trees, tmp_path: Path) -> None:
    make_tree(tmp_path, trees.sources)
    signal, resume = tmp_path / "stopped", tmp_path / "go on"
    hook = {"point": "write-half", "signal": str(signal), "resume": str(resume)}
    first = start([*IN_PLACE, "-j", "1"], cwd=tmp_path, cache=trees.cache, hook=hook)
    assert wait_for(signal, first)
    (held,) = temporaries(tmp_path)
    # A second run meanwhile: the file is being written, so it stays.
    second = run(["pkg", "-o", "out", "-j", "1"], cwd=tmp_path, cache=trees.cache)
    assert second.returncode == 0, second.stderr
    assert temporaries(tmp_path) == [held]
    resume.touch()
    first.communicate(timeout=120)
    assert first.returncode == 0
    assert temporaries(tmp_path) == []
    assert snapshot(tmp_path / "pkg") == trees.in_place


@pytest.mark.slow
def test_only_our_temporary_files_are_removed(trees: Trees, tmp_path: Path) -> None:
    make_tree(tmp_path, trees.sources)
    # Names like ours but not ours: the user's, copied like any other file.
    theirs = {
        "pkg/.m1.py.abcd1234.tmp": b"an editor's",
        "pkg/notes.spam-transpile.tmp": b"a user's",
        "pkg/.m2.py.ABCD1234.spam-transpile.tmp": b"not our alphabet",
    }
    make_tree(tmp_path, theirs)
    done = run(["pkg", "-o", "out", "-j", "1"], cwd=tmp_path, cache=trees.cache)
    assert done.returncode == 0, done.stderr
    assert "removed" not in done.stderr
    for name, data in theirs.items():
        assert (tmp_path / name).read_bytes() == data
        assert (tmp_path / "out" / name[len("pkg/") :]).read_bytes() == data


@pytest.mark.slow
def test_each_output_is_written_as_soon_as_it_is_ready(tmp_path: Path) -> None:
    # The biggest file starts first and is held in its worker (a stopping
    # point); the small ones must be written meanwhile, so a kill now keeps
    # them. Written in input order, they would wait behind it.
    files = {
        "pkg/a_big.py": source(1, functions=8).encode(),
        "pkg/b.py": source(2).encode(),
        "pkg/c.py": source(3).encode(),
    }
    make_tree(tmp_path / "reference", files)
    reference = run(
        ["pkg", "-o", "out", "-j", "1"],
        cwd=tmp_path / "reference",
        cache=tmp_path / "cache",
    )
    assert reference.returncode == 0, reference.stderr
    expected = snapshot(tmp_path / "reference" / "out")
    make_tree(tmp_path / "work", files)
    signal = tmp_path / "held"
    hook = {"point": "transpile", "name": "a_big.py", "signal": str(signal)}
    process = start(
        ["pkg", "-o", "out", "-j", "2", "--no-cache"],
        cwd=tmp_path / "work",
        cache=tmp_path / "cache",
        hook=hook,
    )
    assert wait_for(signal, process)
    out = tmp_path / "work" / "out"
    assert wait_for(out / "b.py", process, patience=60)
    assert wait_for(out / "c.py", process, patience=60)
    kill(process)
    assert snapshot(out) == {"b.py": expected["b.py"], "c.py": expected["c.py"]}


def test_standard_output_keeps_the_input_order() -> None:
    # --check and --diff print results: those wait for the ones before them.
    pairs = [(2, "c"), (0, "a"), (3, "d"), (1, "b")]
    assert list(in_input_order(pairs)) == [(0, "a"), (1, "b"), (2, "c"), (3, "d")]


def _children(pid: int) -> List[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended, it only waits to be reaped


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_end_when_the_run_is_killed(tmp_path: Path) -> None:
    # Only the run itself is killed, as `kill -9 PID` does; its workers,
    # one of them held mid-file, must not wait for work forever.
    make_tree(
        tmp_path,
        {"pkg/a_big.py": source(1, functions=4).encode(), "pkg/b.py": plain(2).encode()}
        | {f"pkg/m{n}.py": source(n).encode() for n in range(3, 6)},
    )
    signal = tmp_path / "held"
    hook = {"point": "transpile", "name": "a_big.py", "signal": str(signal)}
    process = start(
        ["pkg", "-o", "out", "-j", "2", "--no-cache"],
        cwd=tmp_path,
        cache=tmp_path / "cache",
        hook=hook,
    )
    try:
        assert wait_for(signal, process)
        workers = _children(process.pid)
        assert workers
        os.kill(process.pid, 9)
        process.wait()  # not communicate(): live workers keep its pipes open
        deadline = time.monotonic() + 60  # a bound for a hang, not a speed
        while any(map(_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(_running, workers)), "workers outlived the run"
    finally:
        kill(process)
