"""Issue 9: one configuration that every entry point reads, and the traps of a first hour.

In process (CliRunner) or as subprocesses on the tool interpreter; the
real builds, pre-commit and CPython 3.9 runs are in test_integrations.py
and test_readme.py.

- the cache the CLI and the import hook share: each reads the other's
  records, errors included;
- ``[tool.spam-transpile]`` and ``requires-python`` decide the target of
  the CLI, ``spam_transpile.run`` and the builds (``build_settings``);
  errors point at the key's line;
- ``--diff`` shows what ``--in-place`` writes, ``--check`` agrees;
- ``. -o build`` (OUT excluded) works; OUT walked as input is refused;
- ``.gitignore`` and gitignore-style globs (pathspec); the cache folder
  from platformdirs;
- the import hook's default scope, and tracebacks without the tool's frames.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

import pytest

from spam_transpile.files import cache as cache_module
from spam_transpile.files.config import ConfigError, load_project, resolve_target
from spam_transpile.files.write import unified_diff
from spam_transpile.integrations import BuildError, build_settings
from spam_transpile.integrations.import_hook import (
    TranspilingLoader,
    install_import_hook,
)
from tests.cli_invoke import MATCHING, PLAIN, invoke, make_tree

ROOT = Path(__file__).resolve().parent.parent

# CPython rejects it: the alternatives bind different names.
BROKEN = "value = 1\nmatch value:\n    case 1 | other:\n        pass\n"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("SPAM_TRANSPILE_CACHE_DIR", str(directory))
    return directory


def _env(cache: Path, **extra: str) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPAM_TRANSPILE_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


def _python(
    args: Sequence[str], *, cwd: Path, env: Dict[str, str]
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# --------------------------------------------------------------------------
# The shared cache
# --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("first", ["cli", "hook"])
def test_cli_and_import_hook_read_each_others_error_records(
    tmp_path: Path, private_cache: Path, first: str
) -> None:
    make_tree(tmp_path / "app", {"bad.py": BROKEN, "main.py": "import bad\n"})
    app = tmp_path / "app"
    env = _env(private_cache)
    cli = ["-m", "spam_transpile", "--check", "bad.py"]
    hook = ["-m", "spam_transpile.run", "main.py"]
    for args in ([cli, hook] if first == "cli" else [hook, cli]) * 2:
        proc = _python(args, cwd=app, env=env)
        assert "null bytes" not in proc.stderr, proc.stderr
        assert proc.returncode in (1, 2), proc.stderr
        if args is cli:
            assert re.match(r"bad\.py:3:\d+: error: ", proc.stderr), proc.stderr
        else:
            # The proper TranspileError, shown with path, line and column.
            assert f'File "{app / "bad.py"}", line 3' in proc.stderr, proc.stderr
            assert "case 1 | other:" in proc.stderr
            assert "TranspileError: " in proc.stderr
    assert any(private_cache.rglob("*")), "both ran through the cache"


def test_cache_records_round_trip_and_damage_is_a_miss(tmp_path: Path) -> None:
    cache = cache_module.Cache("target=3.9", tmp_path)
    cache.put_output(b"a", "lowered é")
    cache.put_error(b"b", "bad thing", 3, 7)
    assert cache.lookup(b"a") == cache_module.Entry(output="lowered é")
    assert cache.lookup(b"b") == cache_module.Entry(error=("bad thing", 3, 7))
    cache.put(b"c", b"\0error\0not json")
    assert cache.lookup(b"c") is None and cache.lookup(b"missing") is None
    cache.put_warnings(b"a", [("unreachable case", 5, 9)])
    assert cache.warnings(b"a") == (("unreachable case", 5, 9),)
    assert cache.lookup(b"a") == cache_module.Entry(output="lowered é")
    assert cache.warnings(b"b") == ()


def test_default_cache_folder_comes_from_platformdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    monkeypatch.delenv("SPAM_TRANSPILE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    expected = Path(platformdirs.user_cache_dir("spam-transpile", appauthor=False))
    assert cache_module.default_cache_dir() == expected
    if sys.platform.startswith("linux"):
        assert expected == tmp_path / "xdg" / "spam-transpile"


# --------------------------------------------------------------------------
# One source of settings; the target follows requires-python
# --------------------------------------------------------------------------


def _pyproject(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(text, encoding="utf-8")
    return folder / "pyproject.toml"


@pytest.mark.parametrize(
    "requires, table, target",
    [
        (None, "", "3.9"),
        (">=3.7", "", "3.7"),
        (">=3.6.2,<4", "", "3.6"),
        ("~=3.8", "", "3.8"),
        (">=3.6,!=3.6.*", "", "3.7"),
        (">=3.11", "", "3.9"),
        (">=3.7", 'target = "3.6"\n', "3.6"),
        (None, 'target = "3.8"\n', "3.8"),
    ],
)
def test_target_from_the_table_else_from_requires_python(
    tmp_path: Path, requires: Optional[str], table: str, target: str
) -> None:
    project = (
        f'[project]\nname = "p"\nrequires-python = "{requires}"\n' if requires else ""
    )
    path = _pyproject(tmp_path, project + "[tool.spam-transpile]\n" + table)
    assert resolve_target(load_project(path)).version == target
    assert build_settings(tmp_path).target == target
    invoked = invoke([str(tmp_path), "--check", "-v", "-j", "1"])
    assert f"target {target} from " in invoked.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, where, message",
    [
        (
            '[project]\nname = "p"\nrequires-python = ">=3.7"\n\n'
            '[tool.spam-transpile]\ninclude = ["*.py"]\ntarget = "3.9"\n',
            "7:1",
            "target 3.9 is newer than Python 3.7, which requires-python '>=3.7' allows",
        ),
        (
            '[project]\nname = "p"\nrequires-python = ">=3.5"\n',
            "3:1",
            "requires-python '>=3.5' allows Python 3.5",
        ),
        (
            '[project]\nname = "p"\nrequires-python = "3.7"\n',
            "3:1",
            "invalid requires-python",
        ),
        (
            '[tool.spam-transpile]\n  exlcude = ["x"]\n',
            "2:3",
            "unknown option 'exlcude'",
        ),
    ],
)
def test_settings_errors_name_file_line_and_column_everywhere(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = _pyproject(tmp_path, text)
    expected = f"{path}:{where}: error: {message}"
    with pytest.raises(BuildError) as built:
        build_settings(tmp_path)
    assert str(built.value).startswith(expected)
    with pytest.raises(ConfigError):
        resolve_target(load_project(path))
    (tmp_path / "a.py").write_text(MATCHING, encoding="utf-8")
    cli = invoke([str(tmp_path / "a.py"), "--check"])
    assert cli.exit_code == 2 and cli.stderr.startswith(expected), cli.stderr
    run = _python(
        ["-m", "spam_transpile.run", "a.py"], cwd=tmp_path, env=_env(tmp_path / "c")
    )
    assert run.returncode == 2 and run.stderr.startswith(expected), run.stderr
    assert "Traceback" not in cli.stderr + run.stderr


def test_command_line_target_wins_over_requires_python(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[project]\nname = "p"\nrequires-python = ">=3.7"\n')
    (tmp_path / "a.py").write_text(MATCHING, encoding="utf-8")
    result = invoke([str(tmp_path / "a.py"), "--check", "-v", "--target", "3.9"])
    assert result.exit_code == 1
    assert "target 3.9 from --target" in result.stderr


def test_hatch_table_overrides_and_the_log_says_which_tables(tmp_path: Path) -> None:
    _pyproject(
        tmp_path,
        '[project]\nname = "p"\nrequires-python = ">=3.6"\n\n'
        '[tool.spam-transpile]\nexclude = ["gen/"]\n\n'
        '[tool.hatch.build.hooks.spam-transpile]\ntarget = "3.6"\n',
    )
    settings = build_settings(
        tmp_path,
        override={"target": "3.6"},
        override_table="tool.hatch.build.hooks.spam-transpile",
    )
    assert settings.target == "3.6"
    assert "[tool.hatch.build.hooks.spam-transpile] over [tool.spam-transpile]" in (
        settings.origin
    )
    assert "target 3.6 from" in settings.origin
    assert not settings.selector.selects("gen/x.py")
    assert settings.selector.selects("src/x.py")


def test_verbose_names_the_configuration_and_the_target(tmp_path: Path) -> None:
    path = _pyproject(tmp_path, '[tool.spam-transpile]\ntarget = "3.7"\n')
    (tmp_path / "a.py").write_text(MATCHING, encoding="utf-8")
    result = invoke([str(tmp_path), "--check", "-v", "-j", "1"])
    assert f"configuration: {path} [tool.spam-transpile]" in result.stderr
    assert f"target 3.7 from {path} [tool.spam-transpile] target" in result.stderr


@pytest.mark.slow
def test_run_takes_its_target_from_pyproject(
    tmp_path: Path, private_cache: Path
) -> None:
    app = tmp_path / "app"
    _pyproject(app, '[project]\nname = "p"\nrequires-python = ">=3.7"\n')
    make_tree(app, {"main.py": "import shapes\n", "shapes.py": MATCHING})
    proc = _python(
        ["-m", "spam_transpile.run", "main.py"], cwd=app, env=_env(private_cache)
    )
    assert proc.returncode == 0, proc.stderr
    lowered = [p.name for p in (app / "__pycache__").glob("shapes.*.pyc")]
    assert len(lowered) == 1 and lowered[0].endswith("t37.pyc"), lowered


# --------------------------------------------------------------------------
# --diff previews --in-place; --check agrees
# --------------------------------------------------------------------------


def test_diff_shows_what_in_place_writes_and_check_agrees(tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING, "plain.py": PLAIN})
    diff = invoke([str(src), "--diff", "-j", "1"])
    check = invoke([str(src), "--check", "-j", "1"])
    assert diff.exit_code == 0 and check.exit_code == 1
    assert "would transpile" not in diff.stderr
    assert check.stderr.count("would transpile") == 1
    rewrite = invoke([str(src), "--in-place", "-j", "1"])
    assert rewrite.exit_code == 0, rewrite.stderr
    written = (src / "a.py").read_text("utf-8")
    assert diff.stdout == unified_diff(MATCHING, written, str(src / "a.py"))
    # Once rewritten, nothing is left for any of the three to do.
    assert invoke([str(src), "--check", "-j", "1"]).exit_code == 0
    assert invoke([str(src), "--diff", "-j", "1"]).stdout == ""


def test_diff_with_an_explicit_layout(tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"a.py": MATCHING})
    keep = invoke([str(src / "a.py"), "--diff", "--layout", "keep-lines"])
    out = invoke([str(src / "a.py"), "-o", str(tmp_path / "out.py")])
    assert out.exit_code == 0
    lowered = (tmp_path / "out.py").read_text("utf-8")
    assert keep.stdout == unified_diff(MATCHING, lowered, str(src / "a.py"))


# --------------------------------------------------------------------------
# OUT inside the input
# --------------------------------------------------------------------------


def test_dot_into_an_excluded_output_folder(tmp_path: Path) -> None:
    make_tree(tmp_path, {"pkg/a.py": MATCHING, "plain.py": PLAIN, "pyproject.toml": ""})
    for _ in range(2):  # the second run must not walk build/ either
        result = invoke([".", "-o", "build", "-j", "1"], cwd=tmp_path)
        assert result.exit_code == 0, result.stderr
    assert (tmp_path / "build" / "pkg" / "a.py").is_file()
    assert not (tmp_path / "build" / "build").exists()
    walked = invoke([".", "-o", "out"], cwd=tmp_path)
    assert walked.exit_code == 2 and "is inside the input" in walked.stderr
    assert "--extend-exclude out/" in walked.stderr
    excluded = invoke([".", "-o", "out", "--extend-exclude", "out/"], cwd=tmp_path)
    assert excluded.exit_code == 0, excluded.stderr
    assert (tmp_path / "out" / "pkg" / "a.py").is_file()


# --------------------------------------------------------------------------
# pathspec globs and .gitignore
# --------------------------------------------------------------------------


def test_gitignore_is_respected_in_tree_runs(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "generated/\n*_tmp.py\n!keep_tmp.py\n",
            "pyproject.toml": "",
            "src/a.py": MATCHING,
            "src/generated/g.py": MATCHING,
            "src/x_tmp.py": MATCHING,
            "src/keep_tmp.py": MATCHING,
            # A nested .gitignore applies below its own folder.
            "src/sub/.gitignore": "local_*.py\n",
            "src/sub/local_x.py": MATCHING,
            "src/local_y.py": MATCHING,
        },
    )
    (tmp_path / ".git").mkdir()
    found = invoke([str(tmp_path / "src"), "--check", "-j", "1"])
    assert sorted(_would(found.stderr)) == ["a.py", "keep_tmp.py", "local_y.py"]
    everything = invoke([str(tmp_path / "src"), "--check", "--no-gitignore", "-j", "1"])
    assert sorted(_would(everything.stderr)) == [
        "a.py",
        "g.py",
        "keep_tmp.py",
        "local_x.py",
        "local_y.py",
        "x_tmp.py",
    ]
    # A file named on the command line is taken, ignored or not.
    named = invoke([str(tmp_path / "src" / "x_tmp.py"), "--check"])
    assert named.exit_code == 1
    (tmp_path / "pyproject.toml").write_text(
        "[tool.spam-transpile]\ngitignore = false\n"
    )
    configured = invoke([str(tmp_path / "src"), "--check", "-j", "1"])
    assert len(_would(configured.stderr)) == 6


def _would(stderr: str) -> List[str]:
    return [
        Path(line.split(" ", 2)[2]).name
        for line in stderr.splitlines()
        if line.startswith("would transpile ")
    ]


# --------------------------------------------------------------------------
# The import hook's default scope; tracebacks of spam_transpile.run
# --------------------------------------------------------------------------


@pytest.fixture
def clean_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    finders, modules, path = list(sys.meta_path), set(sys.modules), list(sys.path)
    yield
    sys.meta_path[:] = finders
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_hook_lowers_everything_but_the_stdlib_and_installed_code_by_default(
    tmp_path: Path, clean_imports: None
) -> None:
    make_tree(tmp_path / "anywhere", {"scope_mod_a.py": MATCHING})
    make_tree(
        tmp_path / "venv" / "lib" / "site-packages", {"scope_mod_b.py": "X = 1\n"}
    )
    sys.path[:0] = [
        str(tmp_path / "anywhere"),
        str(tmp_path / "venv/lib/site-packages"),
    ]
    finder = install_import_hook()
    assert finder.everywhere
    assert isinstance(
        importlib.import_module("scope_mod_a").__loader__, TranspilingLoader
    )
    installed = importlib.import_module("scope_mod_b").__loader__
    assert not isinstance(installed, TranspilingLoader)
    sys.modules.pop("colorsys", None)
    stdlib = importlib.import_module("colorsys").__loader__
    assert not isinstance(stdlib, TranspilingLoader)


RAISES = """\
import helper_mod

def main():
    helper_mod.explode()

main()
"""
HELPER = """\
def explode():
    match 1:
        case 1:
            raise RuntimeError("boom")
"""


@pytest.mark.slow
@pytest.mark.parametrize("form", ["script", "module"])
def test_run_traceback_shows_the_programs_frames_only(
    tmp_path: Path, private_cache: Path, form: str
) -> None:
    app = make_tree(tmp_path / "app", {"prog.py": RAISES, "helper_mod.py": HELPER})
    env = _env(private_cache)
    program = ["prog.py"] if form == "script" else ["-m", "prog"]
    native = _python(program, cwd=app, env=env)  # 3.10+ runs match itself
    hooked = _python(["-m", "spam_transpile.run", *program], cwd=app, env=env)
    assert native.returncode == hooked.returncode == 1
    assert _frames(hooked.stderr) == _frames(native.stderr)
    assert hooked.stderr.rstrip().endswith("RuntimeError: boom")


def _frames(stderr: str) -> List[str]:
    # "File ..., line N, in NAME" lines; python -m adds runpy's frames to the
    # native run, which `python -m` users see too, so only the program's count.
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', stderr)
    return [
        f"{Path(f).name}:{line}:{name}" for f, line, name in frames if "runpy" not in f
    ]
