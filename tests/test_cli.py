"""The command line: files, folders, stdin, --in-place/--check/--diff, config, errors.

Most tests drive ``spam_transpile.cli.main`` through click's CliRunner with
``-j 1`` (in process, fast); a few run ``python -m spam_transpile`` as a
real subprocess, with worker processes. The golden tree in
``fixtures/trees/basic`` pins what a mirrored folder looks like, file by
file; rerun with ``SPAM_TRANSPILE_REGEN_TREES=1`` to rewrite it after a
deliberate change to the transpiler's output (review with ``git diff``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

from spam_transpile.files import jobs as jobs_module
from spam_transpile.files import statcache as statcache_module
from spam_transpile import transpile, transpile_with_warnings
from spam_transpile.files.config import ConfigError, find_pyproject, read_config
from spam_transpile.files.discover import Filters
from spam_transpile.files.report import (
    Counters,
    ProgressBar,
    Reporter,
    count_lowered_matches,
    summary_line,
)
from spam_transpile.files import write as write_module
from spam_transpile.settings import SUPPORTED_TARGETS
from tests.cli_invoke import MATCHING, PLAIN, invoke, make_tree
from tests.interpreters import require_interpreter

ROOT = Path(__file__).resolve().parent.parent
TREES = ROOT / "fixtures" / "trees"
CASES = ROOT / "fixtures" / "cases"


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
):
    """Every test gets its own cache, never the user's."""
    directory = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("SPAM_TRANSPILE_CACHE_DIR", str(directory))
    return directory


def run_module(args: Sequence[str], *, cwd: Path, input: Optional[bytes] = None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "spam_transpile", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        timeout=120,
        env=env,
    )


def snapshot(root: Path) -> Dict[str, Tuple[bytes, int]]:
    """relative path -> (bytes, permission bits) of every file under root."""
    return {
        path.relative_to(root).as_posix(): (
            path.read_bytes(),
            path.stat().st_mode & 0o777,
        )
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def assert_no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text


# --------------------------------------------------------------------------
# The two original forms
# --------------------------------------------------------------------------


def test_file_to_stdout_prints_the_transpiled_source_and_nothing_else(
    tmp_path: Path,
) -> None:
    source = make_tree(tmp_path, {"m.py": MATCHING}) / "m.py"
    result = invoke([str(source)])
    assert result.exit_code == 0
    assert result.stdout == transpile(MATCHING, filename=str(source))
    assert result.stderr == ""


def test_file_to_output_file_keeps_mode_and_prints_nothing(tmp_path: Path) -> None:
    source = make_tree(tmp_path, {"m.py": MATCHING}) / "m.py"
    source.chmod(0o751)
    target = tmp_path / "deep" / "out.py"
    result = invoke([str(source), "-o", str(target)])
    assert result.exit_code == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")
    assert target.read_text("utf-8") == transpile(MATCHING)
    assert target.stat().st_mode & 0o777 == 0o751


def test_single_file_error_is_one_line_and_exit_2(tmp_path: Path) -> None:
    source = make_tree(tmp_path, {"bad.py": "match x:\n    case [:\n"}) / "bad.py"
    result = invoke([str(source), "-o", str(tmp_path / "out.py")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{source}:2:")
    assert ": error: " in result.stderr
    assert not (tmp_path / "out.py").exists()


def test_missing_file_is_reported_not_raised(tmp_path: Path) -> None:
    result = invoke([str(tmp_path / "nope.py")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'nope.py'}:1:1: error: cannot read file" in result.stderr
    assert_no_traceback(result.stderr)


# --------------------------------------------------------------------------
# Folders: the golden tree
# --------------------------------------------------------------------------


def _regen_requested() -> bool:
    return os.environ.get("SPAM_TRANSPILE_REGEN_TREES", "") not in ("", "0")


@pytest.mark.parametrize("tree", sorted(p.name for p in TREES.iterdir() if p.is_dir()))
def test_golden_tree_is_mirrored_file_by_file(tree: str, tmp_path: Path) -> None:
    source = tmp_path / "input"
    shutil.copytree(TREES / tree / "input", source, symlinks=True)
    out = tmp_path / "out"
    result = invoke([str(source), "-o", str(out), "-j", "1"])
    assert result.exit_code == 0, result.stderr
    expected_root = TREES / tree / "expected"
    if _regen_requested():
        shutil.rmtree(expected_root, ignore_errors=True)
        shutil.copytree(out, expected_root)
    expected = snapshot(expected_root)
    actual = snapshot(out)
    assert sorted(actual) == sorted(expected)
    for name in expected:
        assert actual[name][0] == expected[name][0], (
            f"{name} differs from the golden file; if the transpiler's output "
            "changed on purpose, rerun with SPAM_TRANSPILE_REGEN_TREES=1 and "
            "review the diff"
        )
        assert actual[name][1] == expected[name][1], f"{name} has other permission bits"


def test_golden_tree_summary_counts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke([str(TREES / "basic" / "input"), "-o", str(out), "-j", "1"])
    assert result.exit_code == 0
    summary = result.stderr.strip().splitlines()[-1]
    assert summary.startswith(
        "3 files transpiled, 2 without match statements, 3 other files copied, 0 failed; "
        "4 match statements lowered in "
    )
    assert summary.endswith(" s")


def test_golden_tree_skips_default_exclusions(tmp_path: Path) -> None:
    out = tmp_path / "out"
    invoke([str(TREES / "basic" / "input"), "-o", str(out), "-j", "1"])
    names = set(snapshot(out))
    assert not any(
        name.startswith(("build/", "__pycache__/", ".myenv/")) for name in names
    )
    assert "data/blob.bin" in names and "app/config.json" in names


# The tree uses dataclasses, which 3.6 lacks.
@pytest.mark.slow
@pytest.mark.parametrize("target", [t for t in SUPPORTED_TARGETS if t != "3.6"])
def test_mirrored_tree_runs_like_the_original_on_310(
    target: str, tmp_path: Path
) -> None:
    native = require_interpreter("3.10")
    old = require_interpreter(target)
    source = TREES / "basic" / "input"
    out = tmp_path / "out"
    assert (
        invoke([str(source), "-o", str(out), "--target", target, "-j", "1"]).exit_code
        == 0
    )
    want = subprocess.run(
        [native, str(source / "bin" / "run.py")], capture_output=True, timeout=60
    )
    got = subprocess.run(
        [old, str(out / "bin" / "run.py")], capture_output=True, timeout=60
    )
    assert want.returncode == 0, want.stderr
    assert (got.returncode, got.stdout) == (0, want.stdout), got.stderr


def test_rerun_into_the_same_output_rewrites_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    source = TREES / "basic" / "input"
    assert invoke([str(source), "-o", str(out), "-j", "1"]).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    inodes = {p: p.stat().st_ino for p in before}
    assert invoke([str(source), "-o", str(out), "-j", "1"]).exit_code == 0
    # An atomic rewrite would give each file a new inode.
    assert {p: p.stat().st_ino for p in before} == inodes


def test_several_inputs_keep_their_names_under_output(tmp_path: Path) -> None:
    make_tree(tmp_path / "src", {"a.py": MATCHING, "pkg/b.py": PLAIN, "pkg/c.txt": "c"})
    out = tmp_path / "out"
    result = invoke(
        [
            str(tmp_path / "src" / "a.py"),
            str(tmp_path / "src" / "pkg"),
            "-o",
            str(out),
            "-j",
            "1",
        ]
    )
    assert result.exit_code == 0, result.stderr
    assert sorted(snapshot(out)) == ["a.py", "pkg/b.py", "pkg/c.txt"]


def test_file_into_existing_folder(tmp_path: Path) -> None:
    source = make_tree(tmp_path, {"m.py": MATCHING}) / "m.py"
    (tmp_path / "out").mkdir()
    assert invoke([str(source), "-o", str(tmp_path / "out")]).exit_code == 0
    assert (tmp_path / "out" / "m.py").read_text("utf-8") == transpile(MATCHING)


def test_folder_without_output_mode_is_a_usage_error(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING})
    result = invoke([str(tmp_path)])
    assert result.exit_code == 2
    assert "choose -o OUT, --in-place, --check or --diff" in result.stderr


# --------------------------------------------------------------------------
# stdin, --in-place, --check, --diff
# --------------------------------------------------------------------------


def test_stdin_to_stdout() -> None:
    result = invoke(["-"], input=MATCHING.encode())
    assert result.exit_code == 0
    assert result.stdout == transpile(MATCHING)
    assert result.stderr == ""


def test_stdin_check_and_errors_use_stdin_filename() -> None:
    result = invoke(["--check", "-"], input=MATCHING.encode())
    assert result.exit_code == 1
    assert "would transpile <stdin>" in result.stderr
    bad = invoke(["--stdin-filename", "pkg/x.py", "-"], input=b"match x:\n  case [:\n")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("pkg/x.py:2:")


def test_stdin_to_output_file(tmp_path: Path) -> None:
    result = invoke(["-", "-o", str(tmp_path / "o.py")], input=MATCHING.encode())
    assert result.exit_code == 0
    assert (tmp_path / "o.py").read_text("utf-8") == transpile(MATCHING)


def test_in_place_rewrites_only_files_with_match_statements(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "b.py": PLAIN, "notes.txt": "x"})
    (tmp_path / "a.py").chmod(0o755)
    plain_inode = (tmp_path / "b.py").stat().st_ino
    result = invoke([str(tmp_path), "--in-place", "--layout", "keep-lines", "-j", "1"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "a.py").read_text("utf-8") == transpile(MATCHING)
    assert (tmp_path / "a.py").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "b.py").stat().st_ino == plain_inode  # not even rewritten
    assert "1 file transpiled, 1 without match statements, 0 failed" in result.stderr


def test_in_place_defaults_to_the_readable_layout(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING})
    # --check first fills the cache: the layout is then applied to a cache hit
    assert invoke([str(tmp_path / "a.py"), "--check"]).exit_code == 1
    assert invoke([str(tmp_path / "a.py"), "--in-place"]).exit_code == 0
    text = (tmp_path / "a.py").read_text("utf-8")
    assert text == transpile(MATCHING, layout="readable") != transpile(MATCHING)
    # a second run finds nothing left to do
    assert invoke([str(tmp_path / "a.py"), "--check"]).exit_code == 0


def test_in_place_follows_symbolic_links_to_the_file(tmp_path: Path) -> None:
    make_tree(tmp_path, {"real.py": MATCHING})
    (tmp_path / "link.py").symlink_to("real.py")
    result = invoke([str(tmp_path / "link.py"), "-i", "--layout", "keep-lines"])
    assert result.exit_code == 0
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_text("utf-8") == transpile(MATCHING)


def test_check_lists_files_and_writes_nothing(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "sub/b.py": MATCHING, "c.py": PLAIN})
    before = snapshot(tmp_path)
    result = invoke([str(tmp_path), "--check", "-j", "1"])
    assert result.exit_code == 1
    assert f"would transpile {tmp_path / 'a.py'}" in result.stderr
    assert f"would transpile {tmp_path / 'sub' / 'b.py'}" in result.stderr
    assert "c.py" not in result.stderr
    assert result.stdout == ""
    assert snapshot(tmp_path) == before
    assert (
        "2 files would be transpiled, 1 without match statements, 0 failed"
        in result.stderr
    )


def test_check_passes_on_a_tree_without_match_statements(tmp_path: Path) -> None:
    make_tree(tmp_path, {"c.py": PLAIN, "d.py": "x = 1\n"})
    result = invoke([str(tmp_path), "--check"])
    assert result.exit_code == 0
    assert (
        "0 files would be transpiled, 2 without match statements, 0 failed"
        in result.stderr
    )


def test_diff_prints_a_unified_diff_and_exits_0(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "c.py": PLAIN})
    before = snapshot(tmp_path)
    result = invoke([str(tmp_path), "--diff", "-j", "1"])
    assert result.exit_code == 0
    assert f"--- {tmp_path / 'a.py'}\t(original)" in result.stdout
    assert f"+++ {tmp_path / 'a.py'}\t(transpiled)" in result.stdout
    assert "-    match x:" in result.stdout
    assert "c.py" not in result.stdout
    assert snapshot(tmp_path) == before
    assert invoke([str(tmp_path), "--diff", "--check"]).exit_code == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["-i", "-o", "x"], "cannot be used together"),
        (["--check", "-o", "x"], "write nothing"),
        (["--diff", "-i"], "write nothing"),
    ],
)
def test_conflicting_options(tmp_path: Path, args: List[str], message: str) -> None:
    make_tree(tmp_path, {"a.py": MATCHING})
    result = invoke([str(tmp_path / "a.py"), *args])
    assert result.exit_code == 2
    assert message in result.stderr


def test_no_paths_is_a_usage_error() -> None:
    result = invoke([])
    assert result.exit_code == 2
    assert "give one or more files" in result.stderr


# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("target", ["3.6", "3.7", "3.8", "3.9"])
def test_every_target_is_accepted_and_runs_or_fails_per_file(
    tmp_path: Path, target: str
) -> None:
    make_tree(tmp_path / "src", {"a.py": MATCHING + "print(f([1, 2]), f(0))\n"})
    out = tmp_path / "out"
    result = invoke([str(tmp_path / "src"), "-o", str(out), "--target", target])
    assert result.exit_code == 0, result.stderr
    python = require_interpreter(target)
    run = subprocess.run(
        [python, str(out / "a.py")], capture_output=True, text=True, timeout=60
    )
    assert run.stdout == "3 None\n", run.stderr


@pytest.mark.parametrize("target", ["3.6", "3.7"])
def test_code_the_target_cannot_run_fails_per_file_and_other_files_go_on(
    tmp_path: Path, target: str
) -> None:
    walrus = (
        "def f(x):\n    match x:\n        case 1 if (y := 2):\n            return y\n"
    )
    make_tree(tmp_path / "src", {"a.py": walrus, "b.py": PLAIN, "c.py": MATCHING})
    out = tmp_path / "out"
    result = invoke(
        [str(tmp_path / "src"), "-o", str(out), "--target", target, "-j", "1"]
    )
    assert result.exit_code == 2
    assert (
        f"{tmp_path / 'src' / 'a.py'}:3:20: error: assignment expressions need "
        f"Python 3.8 or newer (target is {target})"
    ) in result.stderr
    assert (out / "b.py").read_text("utf-8") == PLAIN
    assert ":=" not in (out / "c.py").read_text("utf-8")
    assert not (out / "a.py").exists()
    assert_no_traceback(result.stderr)


def test_unknown_target_is_a_usage_error(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING})
    assert invoke([str(tmp_path / "a.py"), "--target", "3.5"]).exit_code == 2


# --------------------------------------------------------------------------
# Include / exclude
# --------------------------------------------------------------------------


def test_default_exclusions(tmp_path: Path) -> None:
    files = {
        f"{folder}/m.py": MATCHING
        for folder in [
            ".git",
            ".tox",
            ".venv",
            "venv",
            "build",
            "dist",
            "__pycache__",
            "x.egg-info",
        ]
    }
    files.update(
        {
            "keep/m.py": MATCHING,
            "envy/pyvenv.cfg": "home = /usr\n",
            "envy/m.py": MATCHING,
        }
    )
    make_tree(tmp_path, files)
    result = invoke([str(tmp_path), "--check", "-j", "1"])
    assert result.stderr.count("would transpile") == 1
    assert f"would transpile {tmp_path / 'keep' / 'm.py'}" in result.stderr


def test_exclude_replaces_and_extend_exclude_adds(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {"build/m.py": MATCHING, "gen/m.py": MATCHING, "src/m.py": MATCHING}
    )
    replaced = invoke([str(tmp_path), "--check", "--exclude", "gen", "-j", "1"])
    assert "build" in replaced.stderr and "gen" not in replaced.stderr
    extended = invoke([str(tmp_path), "--check", "--extend-exclude", "gen", "-j", "1"])
    assert (
        extended.stderr.count("would transpile") == 1
    )  # build (default) and gen skipped


def test_anchored_globs_are_relative_to_the_project_root(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {"pyproject.toml": "", "a/gen/m.py": MATCHING, "b/gen/m.py": MATCHING}
    )
    result = invoke(
        [
            str(tmp_path / "a"),
            str(tmp_path / "b"),
            "--check",
            "--extend-exclude",
            "a/gen/**",
        ]
    )
    assert result.stderr.count("would transpile") == 1
    assert str(tmp_path / "b" / "gen" / "m.py") in result.stderr


def test_include_narrows_what_is_transpiled_and_others_are_copied(
    tmp_path: Path,
) -> None:
    make_tree(tmp_path / "src", {"a.py": MATCHING, "b_test.py": MATCHING})
    out = tmp_path / "out"
    result = invoke(
        [str(tmp_path / "src"), "-o", str(out), "--include", "*_test.py", "-j", "1"]
    )
    assert result.exit_code == 0
    assert (out / "a.py").read_text("utf-8") == MATCHING  # copied verbatim
    assert (out / "b_test.py").read_text("utf-8") == transpile(MATCHING)


def test_named_files_are_taken_unless_force_excluded(tmp_path: Path) -> None:
    make_tree(tmp_path, {"build/m.py": MATCHING, "pyproject.toml": ""})
    named = tmp_path / "build" / "m.py"
    assert invoke([str(named), "--check"]).exit_code == 1
    assert invoke([str(named), "--check", "--force-exclude", "build"]).exit_code == 0


def test_globs_follow_gitignore_rules() -> None:
    def excluded(pattern: str, path: str) -> bool:
        return Filters(root=Path("/p"), exclude=(pattern,)).excluded(path)

    assert excluded("*.py", "a.py") and excluded("*.py", "a/b.py")
    assert excluded("**/gen/*.py", "gen/x.py")
    assert excluded("**/gen/*.py", "a/b/gen/x.py")
    assert excluded("src/**", "src/a/b.py") and not excluded("src/**", "x/src/a")
    assert excluded("[!a]?.py", "bc.py") and not excluded("[!a]?.py", "ac.py")
    assert excluded("out/", "out/") and not excluded("out/", "out")
    filters = Filters(root=Path("/p"), exclude=("*.egg-info", "docs/_build/"))
    assert filters.relative(Path("/p/x/y.egg-info")) == "x/y.egg-info"
    assert filters.excluded("x/y.egg-info")
    assert filters.excluded("docs/_build/")
    assert not filters.excluded("other/docs/_build/")


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------


def test_pyproject_settings_apply_and_the_command_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.spam-transpile]\ntarget = "3.8"\nextend-exclude = ["skip"]\n',
            "src/a.py": MATCHING,
            "src/skip/b.py": MATCHING,
        },
    )
    targets: List[str] = []

    def recording(source: str, **kwargs: Any) -> tuple:
        targets.append(kwargs["target"])
        return transpile_with_warnings(source, **kwargs)

    monkeypatch.setattr(jobs_module, "transpile_with_warnings", recording)
    from_file = invoke([str(tmp_path / "src"), "--check", "-j", "1", "--no-cache"])
    assert from_file.exit_code == 1
    assert targets == ["3.8"]
    assert from_file.stderr.count("would transpile") == 1  # skip/ excluded
    overridden = invoke(
        [str(tmp_path / "src"), "--check", "--target", "3.9", "-j", "1", "--no-cache"]
    )
    assert overridden.exit_code == 1
    assert targets == ["3.8", "3.9"]


def test_config_is_found_from_the_paths_not_the_working_directory(
    tmp_path: Path,
) -> None:
    make_tree(
        tmp_path / "proj", {"pyproject.toml": "[tool.spam-transpile]\nquiet = true\n"}
    )
    make_tree(tmp_path / "proj", {"pkg/a.py": MATCHING})
    result = invoke([str(tmp_path / "proj" / "pkg"), "--check"], cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stderr == ""  # quiet from the file
    assert (
        find_pyproject([str(tmp_path / "proj" / "pkg" / "a.py")])
        == tmp_path / "proj" / "pyproject.toml"
    )


def test_config_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    make_tree(tmp_path, {"pyproject.toml": "[tool.spam-transpile]\ntarget = '3.8'\n"})
    make_tree(tmp_path / "repo", {"pkg/a.py": MATCHING})
    (tmp_path / "repo" / ".git").mkdir()
    assert find_pyproject([str(tmp_path / "repo" / "pkg")]) is None
    # a path that does not exist (yet) is looked up from its folder, no crash
    missing = str(tmp_path / "missing" / "x.py")
    assert find_pyproject([missing]) == tmp_path / "pyproject.toml"


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    make_tree(tmp_path, {"pyproject.toml": "[tool.spam-transpile]\njobs = 1\n"})
    make_tree(tmp_path / "sub", {"pyproject.toml": "[tool.black]\n", "a.py": "x = 1\n"})
    assert (
        find_pyproject([str(tmp_path / "sub" / "a.py")]) == tmp_path / "pyproject.toml"
    )


@pytest.mark.parametrize(
    "table, where, message",
    [
        ("colour = true\n", "3:1", "unknown option 'colour'"),
        ("target = '2.7'\n", "3:1", "unknown target '2.7'"),
        ("  jobs = 'many'\n", "3:3", "option 'jobs'"),
        ("target = \n", "3:10", "invalid TOML"),
    ],
)
def test_bad_configuration_is_a_clear_error(
    tmp_path: Path, table: str, where: str, message: str
) -> None:
    pyproject = "[tool.spam-transpile]\nquiet = false\n" + table
    make_tree(tmp_path, {"pyproject.toml": pyproject, "a.py": PLAIN})
    result = invoke([str(tmp_path / "a.py"), "--check"])
    assert result.exit_code == 2
    # path:line:col of the offending key, as every other error.
    assert result.stderr.startswith(f"{tmp_path / 'pyproject.toml'}:{where}: error: ")
    assert message in result.stderr
    assert_no_traceback(result.stderr)


def test_explicit_config_file(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            "conf.toml": "[tool.spam-transpile]\ninclude = '*.pyw'\n",
            "s/a.pyw": MATCHING,
        },
    )
    result = invoke(
        [str(tmp_path / "s"), "--check", "--config", str(tmp_path / "conf.toml")]
    )
    assert result.exit_code == 1
    assert read_config(tmp_path / "conf.toml") == {"include": "*.pyw"}
    with pytest.raises(ConfigError):
        read_config(tmp_path / "missing.toml")


# --------------------------------------------------------------------------
# Errors: reported per file, the others still processed, exit 2
# --------------------------------------------------------------------------


def _messy_tree(root: Path) -> Path:
    make_tree(
        root,
        {
            "good.py": MATCHING,
            "plain.py": PLAIN,
            "syntax.py": "match x:\n    case [:\n",
        },
    )
    (root / "binary.py").write_bytes(b"\x00\x01\x02binary")
    (root / "latin.py").write_bytes(b'x = 1\ny = "\xff"\n')
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..")  # a loop back to the root
    (root / "self.py").symlink_to("self.py")  # a link to itself
    (root / "broken.py").symlink_to("missing.py")
    return root


def test_errors_are_reported_per_file_and_the_rest_is_processed(tmp_path: Path) -> None:
    root = _messy_tree(tmp_path / "src")
    out = tmp_path / "out"
    result = invoke([str(root), "-o", str(out), "-j", "1"])
    assert result.exit_code == 2
    errors = {
        line.split(":", 1)[0]: line
        for line in result.stderr.splitlines()
        if ": error: " in line
    }
    assert "binary file" in errors[str(root / "binary.py")]
    assert errors[str(root / "latin.py")].startswith(
        f"{root / 'latin.py'}:2:6: error: cannot decode byte 0xff as utf-8"
    )
    assert "PEP 263" in errors[str(root / "latin.py")]
    assert "symbolic link loop" in errors[str(root / "sub" / "up")]
    assert "symbolic link loop" in errors[str(root / "self.py")]
    assert "broken symbolic link" in errors[str(root / "broken.py")]
    assert errors[str(root / "syntax.py")].startswith(f"{root / 'syntax.py'}:2:")
    assert (out / "good.py").read_text("utf-8") == transpile(MATCHING)
    assert (out / "plain.py").read_text("utf-8") == PLAIN
    assert not (out / "binary.py").exists() and not (out / "syntax.py").exists()
    assert "1 file transpiled, 1 unchanged, 0 other files copied" not in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("1 file transpiled, 1 without match statements, 6 failed")
    )
    assert_no_traceback(result.stdout, result.stderr)


@pytest.mark.slow
def test_errors_in_a_subprocess_with_workers(tmp_path: Path) -> None:
    root = _messy_tree(tmp_path / "src")
    proc = run_module([str(root), "--check", "-j", "2"], cwd=tmp_path)
    assert proc.returncode == 2
    stderr = proc.stderr.decode()
    assert stderr.count(": error: ") == 6
    assert f"would transpile {root / 'good.py'}" in stderr
    assert_no_traceback(stderr)


def test_pep263_and_bom_sources_keep_their_encoding(tmp_path: Path) -> None:
    latin = b'# -*- coding: latin-1 -*-\ns = "\xe9"\nmatch s:\n    case "\xe9":\n        pass\n'
    bom = b'\xef\xbb\xbfs = "\xc3\xa9"\nmatch s:\n    case _:\n        pass\n'
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "latin.py").write_bytes(latin)
    (tmp_path / "src" / "bom.py").write_bytes(bom)
    out = tmp_path / "out"
    assert invoke([str(tmp_path / "src"), "-o", str(out), "-j", "1"]).exit_code == 0
    assert (out / "latin.py").read_bytes() == transpile(latin.decode("latin-1")).encode(
        "latin-1"
    )
    assert (out / "bom.py").read_bytes().startswith(b"\xef\xbb\xbfs = ")
    assert b"match s:" not in (out / "bom.py").read_bytes()
    printed = invoke([str(tmp_path / "src" / "latin.py")])
    assert printed.stdout_bytes == (out / "latin.py").read_bytes()


def test_output_inside_the_input_is_refused(tmp_path: Path) -> None:
    make_tree(tmp_path / "src", {"a.py": MATCHING})
    result = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "src" / "out")])
    assert result.exit_code == 2
    assert "is inside the input" in result.stderr
    assert not (tmp_path / "src" / "out").exists()


def test_output_at_the_input_is_refused(tmp_path: Path) -> None:
    make_tree(tmp_path / "src", {"a.py": MATCHING})
    folder = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "src")])
    assert folder.exit_code == 2 and "is the input folder itself" in folder.stderr
    same_file = invoke(
        [str(tmp_path / "src" / "a.py"), "-o", str(tmp_path / "src" / "a.py")]
    )
    assert same_file.exit_code == 2 and "is the input file itself" in same_file.stderr
    many = invoke(
        [str(tmp_path / "src"), str(tmp_path / "src" / "a.py"), "-o", str(tmp_path)]
    )
    assert many.exit_code == 2
    assert (tmp_path / "src" / "a.py").read_text("utf-8") == MATCHING


def test_output_over_a_file_for_a_folder_is_refused(tmp_path: Path) -> None:
    make_tree(tmp_path, {"src/a.py": MATCHING, "taken": "x"})
    result = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "taken")])
    assert result.exit_code == 2 and "-o names a folder" in result.stderr


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "b.py": MATCHING})
    real = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self.name == "a.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    # root can read a chmod 000 file, so simulate the failure instead.
    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = invoke([str(tmp_path), "--check", "-j", "1"])
    assert result.exit_code == 2
    assert (
        f"{tmp_path / 'a.py'}:1:1: error: cannot read file: Permission denied"
        in result.stderr
    )
    assert f"would transpile {tmp_path / 'b.py'}" in result.stderr


def test_unwritable_output_is_reported(tmp_path: Path) -> None:
    make_tree(tmp_path, {"src/a.py": MATCHING, "src/b.py": PLAIN})
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.py").mkdir()  # a folder where the file should go
    result = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "out"), "-j", "1"])
    assert result.exit_code == 2
    assert f"{tmp_path / 'out' / 'a.py'}:1:1: error: cannot write file" in result.stderr
    assert (tmp_path / "out" / "b.py").read_text("utf-8") == PLAIN


def test_in_place_never_truncates_on_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "bad.py": "match x:\n    case [:\n"})
    bad_before = (tmp_path / "bad.py").read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_module.os, "replace", crash)
    result = invoke([str(tmp_path), "-i", "-j", "1"])
    assert result.exit_code == 2
    assert (tmp_path / "a.py").read_text("utf-8") == MATCHING  # old content, whole
    assert (tmp_path / "bad.py").read_bytes() == bad_before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.py",
        "bad.py",
    ]  # no temp files
    assert "No space left on device" in result.stderr


def test_internal_errors_are_reported_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "b.py": MATCHING})

    def broken(source: str, **kwargs: object) -> tuple:
        if "a.py" in str(kwargs.get("filename")):
            raise ValueError("boom")
        return transpile_with_warnings(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs_module, "transpile_with_warnings", broken)
    result = invoke([str(tmp_path), "--check", "-j", "1", "--no-cache"])
    assert result.exit_code == 2
    assert (
        "a.py:1:1: error: internal error (ValueError: boom); please report this"
        in result.stderr
    )
    assert "would transpile" in result.stderr
    assert_no_traceback(result.stderr)


# --------------------------------------------------------------------------
# Speed: pre-scan, cache, workers
# --------------------------------------------------------------------------


def test_cache_makes_a_rerun_transpile_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_cache: Path
) -> None:
    make_tree(
        tmp_path / "src",
        {f"m{i}.py": MATCHING.replace("f(", f"f{i}(") for i in range(3)},
    )
    calls: List[str] = []

    def counting(source: str, **kwargs: object) -> tuple:
        calls.append(str(kwargs.get("filename")))
        return transpile_with_warnings(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs_module, "transpile_with_warnings", counting)
    first = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "o1"), "-j", "1"])
    assert len(calls) == 3 and first.exit_code == 0
    second = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "o2"), "-j", "1"])
    assert len(calls) == 3 and second.exit_code == 0  # all from the cache
    assert snapshot(tmp_path / "o1") == snapshot(tmp_path / "o2")
    assert any(private_cache.rglob("*")), "SPAM_TRANSPILE_CACHE_DIR is honoured"
    # another target is another cache entry
    invoke([str(tmp_path / "src"), "--check", "--target", "3.8", "-j", "1"])
    assert len(calls) == 6
    # --no-cache transpiles again
    invoke([str(tmp_path / "src"), "--check", "--no-cache", "-j", "1"])
    assert len(calls) == 9


def test_cache_is_keyed_by_the_tools_own_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_cache: Path
) -> None:
    """Two installs with one version number but different code (pre-commit
    revisions, an editable install) never share cached outputs."""
    from spam_transpile.files import cache as cache_module
    from spam_transpile.files.cache import code_fingerprint

    package = tmp_path / "pkg"
    make_tree(package, {"a.py": "x = 1\n", "sub/b.py": "y = 2\n"})
    before = code_fingerprint(package)
    assert code_fingerprint(package) == before
    (package / "sub" / "b.py").write_text("y = 3\n")
    assert code_fingerprint(package) != before

    make_tree(tmp_path / "src", {"m.py": MATCHING})
    calls: List[str] = []

    def counting(source: str, **kwargs: object) -> tuple:
        calls.append(str(kwargs.get("filename")))
        return transpile_with_warnings(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs_module, "transpile_with_warnings", counting)
    for n, fingerprint in enumerate(["0.1.0-aaaa", "0.1.0-aaaa", "0.1.0-bbbb"]):
        monkeypatch.setattr(cache_module, "tool_fingerprint", lambda f=fingerprint: f)
        monkeypatch.setattr(
            "spam_transpile.files.statcache.tool_fingerprint", lambda f=fingerprint: f
        )
        out = tmp_path / f"o{n}"
        assert invoke([str(tmp_path / "src"), "-o", str(out), "-j", "1"]).exit_code == 0
    assert len(calls) == 2  # the second run was served, the third was not


def test_errors_are_cached_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path / "a", {"bad.py": "x = 1\nmatch x:\n    case [:\n"})
    make_tree(tmp_path / "b", {"same.py": "x = 1\nmatch x:\n    case [:\n"})
    first = invoke([str(tmp_path / "a"), "--check", "-j", "1"])
    calls: List[str] = []
    monkeypatch.setattr(
        jobs_module,
        "transpile_with_warnings",
        lambda s, **k: calls.append("x") or transpile_with_warnings(s, **k),
    )
    again = invoke([str(tmp_path / "a"), "--check", "-j", "1"])
    assert calls == []
    assert again.stderr == first.stderr.replace(
        first.stderr.splitlines()[-1], again.stderr.splitlines()[-1]
    )
    assert first.stderr.startswith(f"{tmp_path / 'a' / 'bad.py'}:3:")
    # same bytes elsewhere: the cached error names the new path
    moved = invoke([str(tmp_path / "b"), "--check", "-j", "1"])
    assert moved.exit_code == 2 and calls == []
    assert moved.stderr.startswith(f"{tmp_path / 'b' / 'same.py'}:3:")


def test_files_that_cannot_hold_match_are_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"a.py": PLAIN, "b.py": "x = 1\n", "c.py": MATCHING})
    calls: List[str] = []
    monkeypatch.setattr(
        jobs_module,
        "transpile_with_warnings",
        lambda s, **k: calls.append(str(k["filename"])) or transpile_with_warnings(s),
    )
    invoke([str(tmp_path), "--check", "-j", "1", "--no-cache"])
    assert [Path(c).name for c in calls] == ["c.py"]


@pytest.mark.slow
def test_workers_give_the_same_tree_as_one_process(tmp_path: Path) -> None:
    files = {f"pkg{i % 3}/m{i}.py": MATCHING.replace("f(", f"f{i}(") for i in range(8)}
    files.update({f"pkg{i}/plain.py": PLAIN for i in range(3)})
    make_tree(tmp_path / "src", files)
    one = invoke(
        [str(tmp_path / "src"), "-o", str(tmp_path / "one"), "-j", "1", "--no-cache"]
    )
    proc = run_module(["src", "-o", "many", "-j", "2", "--no-cache"], cwd=tmp_path)
    assert one.exit_code == 0 and proc.returncode == 0, proc.stderr
    assert snapshot(tmp_path / "one") == snapshot(tmp_path / "many")
    assert (
        b"8 files transpiled, 3 without match statements, 0 failed; "
        b"8 match statements lowered" in proc.stderr
    )


def test_job_results_pickle() -> None:
    import pickle

    job = jobs_module.TranspileJob("a.py", MATCHING, "3.9", "keep-lines")
    outcome = jobs_module.run_job(pickle.loads(pickle.dumps(job)))
    assert pickle.loads(pickle.dumps(outcome)) == outcome
    assert outcome.final == transpile(MATCHING)


# --------------------------------------------------------------------------
# Reporting: -q, -v, summary, progress bar
# --------------------------------------------------------------------------


def test_quiet_prints_errors_only(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": MATCHING, "bad.py": "match x:\n  case [:\n"})
    result = invoke([str(tmp_path), "--check", "-q", "-j", "1"])
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines()] == [
        line for line in result.stderr.splitlines() if ": error: " in line
    ]
    assert len(result.stderr.splitlines()) == 1


def test_verbose_names_every_file_and_the_settings(tmp_path: Path) -> None:
    make_tree(tmp_path / "src", {"a.py": MATCHING, "b.py": PLAIN, "c.txt": "c"})
    result = invoke(
        [str(tmp_path / "src"), "-o", str(tmp_path / "out"), "-v", "-j", "1"]
    )
    assert "configuration: none" in result.stderr
    assert "cache: " in result.stderr
    assert (
        f"transpiled {tmp_path / 'src' / 'a.py'} (2 match statements)"
        not in result.stderr
    )
    assert (
        f"transpiled {tmp_path / 'src' / 'a.py'} (1 match statement)" in result.stderr
    )
    assert f"no match statement in {tmp_path / 'src' / 'b.py'}" in result.stderr
    assert f"copied {tmp_path / 'src' / 'c.txt'}" in result.stderr


def test_summary_line_wording() -> None:
    counters = Counters(
        transpiled=2, unchanged=5, without_match=4, copied=1, failed=1, matches=3
    )
    counters.cached = {"unchanged": 5, "without_match": 1}
    assert summary_line(counters, 1.234, dry_run=False) == (
        "2 files transpiled, 5 unchanged (cached), 4 without match statements "
        "(1 cached), 1 other file copied, 1 failed; "
        "3 match statements lowered in 1.23 s"
    )
    one = Counters(transpiled=1, matches=1)
    assert summary_line(one, 0, dry_run=True) == (
        "1 file would be transpiled, 0 failed; 1 match statement to lower in 0.00 s"
    )


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_and_only_on_long_runs() -> None:
    now = [0.0]
    bar = ProgressBar(FakeTerminal(), total=10, clock=lambda: now[0])
    bar.update(1)
    assert bar.stream.getvalue() == ""  # not yet half a second
    now[0] = 1.0
    bar.update(5)
    assert "[###############---------------] 5/10 files" in bar.stream.getvalue()
    bar.clear()
    assert bar.stream.getvalue().endswith("\r")
    piped = Reporter(io.StringIO())
    piped.start_progress(100)
    assert piped.progress is None
    terminal = Reporter(FakeTerminal())
    terminal.start_progress(100)
    assert terminal.progress is not None
    quiet = Reporter(FakeTerminal(), quiet=True)
    quiet.start_progress(100)
    assert quiet.progress is None


def test_exit_codes() -> None:
    reporter = Reporter(io.StringIO(), check=True)
    assert reporter.exit_code() == 0
    reporter.transpiled("a.py", 1)
    assert reporter.exit_code() == 1
    reporter.failed("a.py:1:1: error: x")
    assert reporter.exit_code() == 2


def test_count_lowered_matches() -> None:
    source = (
        "match = 1\n" + MATCHING + "def g(y):\n    match y:\n        case 1: pass\n"
    )
    assert count_lowered_matches(source, transpile(source)) == 2


# --------------------------------------------------------------------------
# Layouts
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Real subprocesses
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_subprocess_mirror_check_and_exit_codes(tmp_path: Path) -> None:
    shutil.copytree(TREES / "basic" / "input", tmp_path / "input")
    mirrored = run_module(["input", "-o", "out"], cwd=tmp_path)
    assert mirrored.returncode == 0, mirrored.stderr
    assert snapshot(tmp_path / "out") == snapshot(TREES / "basic" / "expected")
    assert (
        mirrored.stderr.decode().count("\n") == 1
    )  # just the summary: stderr is no TTY
    assert b"\r" not in mirrored.stderr
    assert run_module(["input", "--check"], cwd=tmp_path).returncode == 1
    assert run_module(["out", "--check"], cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_subprocess_stdin_and_version(tmp_path: Path) -> None:
    proc = run_module(["-"], cwd=tmp_path, input=MATCHING.encode())
    assert proc.returncode == 0
    assert proc.stdout.decode() == transpile(MATCHING)
    version = run_module(["--version"], cwd=tmp_path)
    assert version.returncode == 0 and b"spam-transpile" in version.stdout


@pytest.mark.slow
def test_subprocess_in_place_keeps_executable_bit(tmp_path: Path) -> None:
    script = (
        make_tree(tmp_path, {"tool.py": "#!/usr/bin/env python3\n" + MATCHING})
        / "tool.py"
    )
    script.chmod(0o755)
    proc = run_module(["tool.py", "--in-place"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert script.stat().st_mode & stat.S_IXUSR
    assert "match x:" not in script.read_text("utf-8")


TALK = (
    "for number in range(15):\n"
    "    match number % 5, number % 3:\n"
    "        case _, 0: print('Spam!')\n"
    "        case 0, _: print('Eggs?')\n"
    "        case 0, 0: print('Spam and eggs.')\n"
    "        case _, _: print(number)\n"
)


def test_unreachable_cases_are_warned_about_also_on_cache_hits(tmp_path: Path) -> None:
    make_tree(tmp_path / "src", {"talk.py": TALK})
    warning = (
        f"{tmp_path / 'src' / 'talk.py'}:5:9: warning: unreachable case: "
        "the case on line 3 matches everything it matches"
    )
    for out in ("first", "second"):  # the second run is served by the cache
        result = invoke([str(tmp_path / "src"), "-o", str(tmp_path / out), "-j", "1"])
        assert result.exit_code == 0, result.stderr
        assert warning in result.stderr.splitlines()
    quiet = invoke([str(tmp_path / "src"), "-o", str(tmp_path / "third"), "-q"])
    assert "warning" not in quiet.stderr


# --------------------------------------------------------------------------
# The stat cache: reruns that open no file
# --------------------------------------------------------------------------


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust files written just before a run, as if they were old.

    The stat cache leaves out sources changed less than two seconds before
    a run (a later change in the same timestamp tick would go unseen);
    tests write their trees a moment before running on them.
    """
    monkeypatch.setattr(statcache_module, "RACY_MARGIN_NS", 0)


class Reads:
    """Records every file the run opens under ``root`` (or forbids it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.root = str(root)
        self.paths: List[str] = []
        self.forbidden = False
        real_read, real_open = Path.read_bytes, open
        reads = self

        def read_bytes(path: Path) -> bytes:
            reads.saw(path)
            return real_read(path)

        def opening(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, Path)):
                reads.saw(file)
            return real_open(file, *args, **kwargs)

        def transpiling(source: str, **kwargs: Any) -> Any:
            reads.saw(str(kwargs.get("filename")))
            return transpile_with_warnings(source, **kwargs)

        monkeypatch.setattr(Path, "read_bytes", read_bytes)
        monkeypatch.setattr("builtins.open", opening)
        monkeypatch.setattr(jobs_module, "transpile_with_warnings", transpiling)

    def saw(self, path: Any) -> None:
        name = os.path.abspath(path)
        if name.startswith(self.root):
            assert not self.forbidden, f"the run opened {name}"
            self.paths.append(name)

    def names(self) -> List[str]:
        return sorted({Path(p).name for p in self.paths})


def _summary(stderr: str) -> str:
    """The summary line without its time."""
    return stderr.strip().splitlines()[-1].rsplit(" in ", 1)[0]


def _uncached(summary: str) -> str:
    """A summary without its "(cached)" notes."""
    return summary.replace(" (cached)", "")


def _stat_files(cache: Path) -> List[Path]:
    return sorted(cache.rglob("stat-*.json"))


STAT_TREE = {
    "a.py": MATCHING,
    "talk.py": TALK,
    "plain.py": PLAIN,
    "data/notes.txt": "notes\n",
}


def test_stat_cache_rerun_into_the_same_output_opens_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    src = make_tree(tmp_path / "src", STAT_TREE)
    args = [str(src), "-o", str(tmp_path / "out"), "-j", "1"]
    first = invoke(args)
    assert first.exit_code == 0, first.stderr
    built = snapshot(tmp_path / "out")
    reads = Reads(monkeypatch, tmp_path)
    for _ in range(2):
        reads.forbidden = True
        again = invoke(args)
        reads.forbidden = False
        assert again.exit_code == 0, again.stderr
        # Same counts, same warnings, same files, nothing opened.
        # A rerun that rewrote nothing says so.
        assert _summary(first.stderr) == (
            "2 files transpiled, 1 without match statements, 1 other file copied, "
            "0 failed; 2 match statements lowered"
        )
        assert _summary(again.stderr) == (
            "0 files transpiled, 2 unchanged (cached), 1 without match statements "
            "(cached), 1 other file unchanged (cached), 0 failed; "
            "0 match statements lowered"
        )
        assert again.stderr.splitlines()[:-1] == first.stderr.splitlines()[:-1]
        assert ": warning: unreachable case" in again.stderr
        assert snapshot(tmp_path / "out") == built


def test_stat_cache_check_and_in_place_reruns_open_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING, "plain.py": PLAIN})
    check = invoke([str(src), "--check", "-j", "1"])
    assert check.exit_code == 1
    reads = Reads(monkeypatch, tmp_path)
    reads.forbidden = True
    again = invoke([str(src), "--check", "-j", "1"])
    assert again.exit_code == 1
    assert again.stderr.splitlines()[:-1] == check.stderr.splitlines()[:-1]
    assert _uncached(_summary(again.stderr)) == _summary(check.stderr)
    assert "(cached)" in again.stderr
    assert f"would transpile {src / 'a.py'}" in again.stderr
    reads.forbidden = False
    rewrite = invoke([str(src), "--in-place", "-j", "1"])
    assert _summary(rewrite.stderr).startswith(
        "1 file transpiled, 1 without match statements"
    )
    rewritten = (src / "a.py").read_bytes()
    # The rewritten source is remembered as written: the next run opens
    # nothing and counts what a full run counts.
    reads.forbidden = True
    after = invoke([str(src), "--in-place", "-j", "1"])
    assert after.exit_code == 0, after.stderr
    reads.forbidden = False
    full = invoke([str(src), "--in-place", "-j", "1", "--no-cache"])
    assert _uncached(_summary(after.stderr)) == _summary(full.stderr)
    assert _summary(full.stderr).startswith(
        "0 files transpiled, 2 without match statements"
    )
    assert (src / "a.py").read_bytes() == rewritten


def test_stat_cache_picks_up_changed_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING, "plain.py": PLAIN})
    out = tmp_path / "out"
    args = [str(src), "-o", str(out), "-j", "1"]
    assert invoke(args).exit_code == 0
    reads = Reads(monkeypatch, tmp_path / "src")
    # Another size.
    (src / "plain.py").write_text(PLAIN + "x = 1\n", encoding="utf-8")
    assert invoke(args).exit_code == 0
    assert reads.names() == ["plain.py"]
    assert (out / "plain.py").read_text("utf-8") == PLAIN + "x = 1\n"
    # The same size, written a second later.
    reads.paths.clear()
    edited = MATCHING.replace("a + b", "a - b")
    _write_later(src / "a.py", edited)
    assert invoke(args).exit_code == 0
    assert reads.names() == ["a.py"]
    assert (out / "a.py").read_text("utf-8") == transpile(edited)


def _write_later(path: Path, text: str) -> None:
    """Rewrite ``path`` as an edit made a second after the last one would."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_stat_cache_sees_a_source_changed_back_with_its_old_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    # cp -p, rsync -t and `touch -r` restore an mtime; the ctime (which any
    # write moves and nothing can set back) still tells.
    src = make_tree(tmp_path / "src", {"a.py": MATCHING})
    out = tmp_path / "out"
    args = [str(src), "-o", str(out), "-j", "1"]
    assert invoke(args).exit_code == 0
    old = (src / "a.py").stat()
    time.sleep(0.05)  # past the file system's timestamp tick
    edited = MATCHING.replace("a + b", "a - b")
    (src / "a.py").write_text(edited, encoding="utf-8")
    os.utime(src / "a.py", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert invoke(args).exit_code == 0
    assert (out / "a.py").read_text("utf-8") == transpile(edited)
    # ... and back: the first content under a new stat.
    time.sleep(0.05)
    (src / "a.py").write_text(MATCHING, encoding="utf-8")
    os.utime(src / "a.py", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert invoke(args).exit_code == 0
    assert (out / "a.py").read_text("utf-8") == transpile(MATCHING)


def test_stat_cache_rewrites_deleted_and_edited_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    src = make_tree(tmp_path / "src", STAT_TREE)
    out = tmp_path / "out"
    args = [str(src), "-o", str(out), "-j", "1"]
    first = invoke(args)
    built = snapshot(out)
    (out / "a.py").unlink()
    (out / "data" / "notes.txt").unlink()
    _write_later(out / "plain.py", PLAIN.replace("a", "b"))
    (out / "talk.py").chmod(0o700)
    reads = Reads(monkeypatch, tmp_path / "src")
    again = invoke(args)
    assert again.exit_code == 0, again.stderr
    assert _summary(again.stderr) == _summary(first.stderr)
    assert snapshot(out) == built
    assert reads.names() == ["a.py", "notes.txt", "plain.py", "talk.py"]


def test_stat_cache_follows_symbolic_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    src = make_tree(tmp_path / "src", {"x.txt": "x = 1\n", "y.txt": "y = 2\n"})
    os.utime(src / "y.txt", ns=(0, (src / "x.txt").stat().st_mtime_ns))
    (src / "m.py").symlink_to("x.txt")
    out = tmp_path / "out"
    args = [str(src), "-o", str(out), "-j", "1"]
    assert invoke(args).exit_code == 0
    # Pointed at a file of the same size and mtime: still a new file.
    (src / "m.py").unlink()
    (src / "m.py").symlink_to("y.txt")
    assert invoke(args).exit_code == 0
    assert (out / "m.py").read_text("utf-8") == "y = 2\n"


def test_stat_cache_leaves_out_files_changed_just_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No `settled` here: a file written a moment ago may still change
    # within the same timestamp tick, so the rerun reads it again.
    src = make_tree(tmp_path / "src", {"old.py": PLAIN})
    time.sleep(0.2)
    make_tree(src, {"a.py": MATCHING})
    monkeypatch.setattr(statcache_module, "RACY_MARGIN_NS", 10**8)
    args = [str(src), "--check", "-j", "1"]
    assert invoke(args).exit_code == 1
    reads = Reads(monkeypatch, src)
    assert invoke(args).exit_code == 1
    assert reads.names() == ["a.py"]


def test_stat_cache_never_remembers_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    src = make_tree(
        tmp_path / "src", {"bad.py": "match x:\n    case [:\n", "a.py": MATCHING}
    )
    (src / "latin.py").write_bytes(b"x = '\xff'\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.py").mkdir()  # cannot be written
    args = [str(src), "-o", str(tmp_path / "out"), "-j", "1"]
    first = invoke(args)
    reads = Reads(monkeypatch, src)
    for _ in range(2):
        again = invoke(args)
        assert again.exit_code == 2
        assert again.stderr.count(": error: ") == 3 == first.stderr.count(": error: ")
        assert reads.names() == ["a.py", "bad.py", "latin.py"]
        reads.paths.clear()


def test_stat_cache_damaged_file_is_an_empty_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_cache: Path, settled: None
) -> None:
    src = make_tree(tmp_path / "src", STAT_TREE)
    out = tmp_path / "out"
    args = [str(src), "-o", str(out), "-j", "1"]
    first = invoke(args)
    built = snapshot(out)
    [stat_file] = _stat_files(private_cache)
    good = stat_file.read_bytes()
    entries = json.loads(good)["entries"]
    damaged_entries = {
        key: [value[0], value[1], value[2], "transpiled", -1, [["x"]]]
        for key, value in entries.items()
    }
    for damage in (
        good[: len(good) // 2],
        b"\xff\xfe garbage",
        b"[" * 100000,
        b'{"format": 1, "entries": []}',
        b'{"format": 99, "entries": {}}',
        json.dumps({"format": 1, "entries": damaged_entries}).encode(),
        json.dumps({"format": 1, "entries": {k: 7 for k in entries}}).encode(),
    ):
        stat_file.write_bytes(damage)
        reads = Reads(monkeypatch, src)
        again = invoke(args)
        assert again.exit_code == 0, again.stderr
        # Every file read again (nothing "cached"), nothing rewritten.
        assert _summary(again.stderr) == (
            "0 files transpiled, 2 unchanged, 1 without match statements, "
            "1 other file unchanged, 0 failed; 0 match statements lowered"
        )
        assert snapshot(out) == built
        assert reads.names() == ["a.py", "notes.txt", "plain.py", "talk.py"]
        # ... and written whole again for the next run.
        assert json.loads(stat_file.read_bytes())["entries"] == entries


def test_no_cache_neither_reads_nor_writes_the_stat_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_cache: Path, settled: None
) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING, "plain.py": PLAIN})
    args = [str(src), "-o", str(tmp_path / "out"), "-j", "1"]
    assert invoke([*args, "--no-cache"]).exit_code == 0
    assert _stat_files(private_cache) == []
    assert invoke(args).exit_code == 0
    assert len(_stat_files(private_cache)) == 1
    reads = Reads(monkeypatch, src)
    assert invoke([*args, "--no-cache"]).exit_code == 0
    assert reads.names() == ["a.py", "plain.py"]


def test_stat_cache_is_kept_per_options_and_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_cache: Path, settled: None
) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING, "plain.py": PLAIN})
    out = tmp_path / "out"
    assert invoke([str(src), "-o", str(out), "-j", "1"]).exit_code == 0
    reads = Reads(monkeypatch, src)
    # Another target, another output tree, another action: files are read.
    for extra in (["-o", str(out), "--target", "3.8"], ["-o", str(tmp_path / "o2")]):
        assert invoke([str(src), *extra, "-j", "1"]).exit_code == 0
        assert reads.names() == ["a.py", "plain.py"]
        reads.paths.clear()
    assert len(_stat_files(private_cache)) == 3
    # --include now copies a.py instead of transpiling it.
    verbatim = invoke([str(src), "-o", str(out), "--include", "plain.py", "-j", "1"])
    assert "1 other file copied" in verbatim.stderr
    assert (out / "a.py").read_text("utf-8") == MATCHING
    assert reads.names() == ["a.py"]
    # The same tree through other paths: a.py's output goes elsewhere.
    both = invoke([str(src / "a.py"), str(src), "-o", str(out), "-j", "1"])
    assert both.exit_code == 0, both.stderr
    assert (out / "src" / "a.py").read_text("utf-8") == transpile(MATCHING)


def test_diff_and_standard_output_do_not_use_the_stat_cache(
    tmp_path: Path, private_cache: Path, settled: None
) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING})
    for _ in range(2):
        diff = invoke([str(src), "--diff", "-j", "1"])
        assert "+++ " in diff.stdout
        printed = invoke([str(src / "a.py")])
        assert printed.stdout == transpile(MATCHING)
    assert _stat_files(private_cache) == []


# -- line endings: old Mac (\r), Windows (\r\n), form feeds ----------------------

SUM_PAIR = [
    "x = [1, 2]",
    "\x0cmatch x:",
    "    case [a, b]:",
    "        print(a + b)",
    "    case _:",
    "        print('no')",
    "",
]


def _same_line_endings(data: bytes, ending: bytes) -> bool:
    others = data.replace(ending, b"")
    return data.count(ending) > 0 and b"\r" not in others and b"\n" not in others


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["\r", "\r\n"], ids=["cr", "crlf"])
def test_every_line_ending_cpython_takes_is_transpiled(
    ending: str, tmp_path: Path
) -> None:
    """A file with lone ``\\r`` line endings (and a form feed before
    ``match``) is seen to hold a match statement by ``--check``, ``--diff``,
    ``-o`` and ``--in-place``, and every output keeps the file's endings."""
    python = require_interpreter("3.9")
    raw = ending.join(SUM_PAIR).encode()
    source = tmp_path / "src" / "old_mac.py"
    source.parent.mkdir()
    source.write_bytes(raw)

    checked = invoke(["--check", str(source.parent), "-j", "1"])
    assert checked.exit_code == 1, checked.stderr
    assert "would transpile" in checked.stdout + checked.stderr

    diffed = invoke(["--diff", str(source), "-j", "1"])
    assert diffed.exit_code == 0 and "+if " in diffed.stdout.replace("\r", "")

    single = tmp_path / "single.py"
    assert invoke([str(source), "-o", str(single)]).exit_code == 0
    mirror = tmp_path / "mirror"
    assert invoke([str(source.parent), "-o", str(mirror), "-j", "1"]).exit_code == 0
    in_place = tmp_path / "in_place" / "old_mac.py"
    in_place.parent.mkdir()
    in_place.write_bytes(raw)
    assert invoke(["--in-place", str(in_place), "-j", "1"]).exit_code == 0

    for output in (single, mirror / "old_mac.py", in_place):
        data = output.read_bytes()
        assert data != raw and b"match x" not in data, output
        assert _same_line_endings(data, ending.encode()), output
        ran = subprocess.run([python, str(output)], capture_output=True, timeout=60)
        assert ran.stdout.strip() == b"3", ran.stderr
    # keep-lines: one line per line
    assert single.read_bytes().count(ending.encode()) == raw.count(ending.encode())
