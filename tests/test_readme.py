"""The README's pre-commit, build and run instructions, run as written.

spam-transpile is not on an index yet, so the README installs it from its
git repository at a commit (``git+<repository URL>@<commit>``, ``rev:
<commit>``). Here the repository is a committed snapshot of this working
tree and the URL a ``file://`` one; everything else in each snippet is
taken from README.md as it stands, and run in fresh virtual environments
(packages from PyPI, nothing from this test run's environment):

- the ``.pre-commit-config.yaml`` of "pre-commit", with the real pre-commit;
- the hatchling ``pyproject.toml`` of "Build step", with ``python -m build``;
- the console lines of "Run a source tree on 3.9 without building", on
  CPython 3.9.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest

from tests.interpreters import require_interpreter
from tests.git_repos import WITH_MATCH, behaviour, commit_snapshot, git

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
SAMPLE = ROOT / "fixtures" / "sample_project"

pytestmark = pytest.mark.slow

TIMEOUT = 900


def _section(title: str) -> str:
    """The README text from heading ``title`` to the next heading."""
    lines = README[README.index(f"\n{title}\n") + 1 :].splitlines(keepends=True)
    taken, fenced = [lines[0]], False
    for line in lines[1:]:
        fenced ^= line.startswith("```")
        # A "# comment" inside a code block is no heading.
        if not fenced and re.match(r"#{1,4} ", line):
            break
        taken.append(line)
    return "".join(taken)


def _blocks(section: str, language: str) -> List[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)


def _run(args: List[str], **kwargs: object) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        **kwargs,  # type: ignore[arg-type]
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def _env(**extra: str) -> Dict[str, str]:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    # Nothing from this test run: no checkout on the path, no local wheels.
    for name in ("PYTHONPATH", "PYTHONHOME", "PIP_FIND_LINKS", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """A git repository holding this working tree: its file:// URL and commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    snapshot = tmp_path_factory.mktemp("spam-transpile-repo")
    commit = commit_snapshot(snapshot)
    return {"path": str(snapshot), "url": snapshot.as_uri(), "commit": commit}


def _fill(text: str, repository: Dict[str, str], url: str) -> str:
    assert "<repository URL>" in text and "<commit>" in text, text
    return text.replace("<repository URL>", url).replace(
        "<commit>", repository["commit"]
    )


def _venv(python: str, folder: Path, *packages: str) -> Path:
    _run([python, "-m", "venv", folder])
    bin_python = folder / "bin" / "python"
    # pip before 24.1 rejects git+file:/// URLs (no host), which stand in for
    # the README's git+https:// ones here; a user's pip sees https.
    _run([bin_python, "-m", "pip", "install", "--quiet", "pip>=24.1"], env=_env())
    if packages:
        _run([bin_python, "-m", "pip", "install", "--quiet", *packages], env=_env())
    return bin_python


# --------------------------------------------------------------------------
# pre-commit
# --------------------------------------------------------------------------


def test_readme_pre_commit_config(repository: Dict[str, str], tmp_path: Path) -> None:
    [config] = _blocks(_section("### pre-commit"), "yaml")
    # The README's own comment allows a local clone's path as `repo`.
    config = _fill(config, repository, repository["path"])
    pre_commit = _venv(sys.executable, tmp_path / "pre-commit-venv", "pre-commit")
    user = tmp_path / "user-repo"
    user.mkdir()
    (user / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    (user / "pyproject.toml").write_text('[tool.spam-transpile]\ntarget = "3.7"\n')
    (user / "shapes.py").write_text(WITH_MATCH, encoding="utf-8")
    git("init", "-q", cwd=user)
    git("add", "-A", cwd=user)
    home = tmp_path / "pre-commit-home"
    env = _env(PRE_COMMIT_HOME=str(home), SPAM_TRANSPILE_CACHE_DIR=str(tmp_path / "c"))
    env.pop("PRE_COMMIT", None)
    proc = subprocess.run(
        [pre_commit, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "files were modified by this hook" in proc.stdout
    rewritten = (user / "shapes.py").read_text("utf-8")
    tree = ast.parse(rewritten)
    assert not any(isinstance(n, (ast.Match, ast.NamedExpr)) for n in ast.walk(tree))
    assert behaviour(rewritten) == behaviour(WITH_MATCH)
    # The hook declared black for the readable layout: it is in the hook env.
    assert list(home.glob("repo*/py_env-*/bin/black")), "black is in the hook env"


# --------------------------------------------------------------------------
# python -m build
# --------------------------------------------------------------------------


def _hatchling_pyproject(repository: Dict[str, str]) -> str:
    section = _section("### hatchling")
    [toml] = _blocks(section, "toml")
    toml = _fill(toml, repository, repository["url"])
    toml = toml.replace("src/mypkg/_py310_only.py", "src/sample_shapes/_native.py")
    # What the snippet leaves to the user's own project.
    toml = toml.replace(
        "[project]\n", '[project]\nname = "sample-shapes"\nversion = "1.0.0"\n'
    )
    return (
        toml + '\n[tool.hatch.build.targets.wheel]\npackages = ["src/sample_shapes"]\n'
    )


def test_readme_build_with_hatchling_from_a_commit(
    repository: Dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLE / "src", project / "src")
    pyproject = _hatchling_pyproject(repository)
    assert (
        f"spam-transpile @ git+{repository['url']}@{repository['commit']}" in pyproject
    )
    (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    build = _venv(sys.executable, tmp_path / "build-venv", "build")
    proc = _run([build, "-m", "build", "--wheel", project], cwd=project, env=_env())
    log = proc.stdout + proc.stderr
    assert "spam-transpile: lowered 4 of 6 modules for Python 3.8" in log
    [wheel] = (project / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        geometry = archive.read("sample_shapes/geometry.py")
        native = archive.read("sample_shapes/_native.py")
    assert not any(isinstance(n, ast.Match) for n in ast.walk(ast.parse(geometry)))
    assert native == (SAMPLE / "src" / "sample_shapes" / "_native.py").read_bytes()


# --------------------------------------------------------------------------
# python -m spam_transpile.run on 3.9
# --------------------------------------------------------------------------


def test_readme_run_instructions_on_39(
    repository: Dict[str, str], tmp_path: Path
) -> None:
    python39 = require_interpreter("3.9")
    [console] = _blocks(
        _section("### Run a source tree on 3.9 without building"), "console"
    )
    lines = [line[2:] for line in console.splitlines() if line.startswith("$ ")]
    venv = _venv(python39, tmp_path / "py39", "pytest")  # the README runs pytest too
    project = tmp_path / "project"
    shutil.copytree(SAMPLE / "src", project / "src")
    shutil.copytree(SAMPLE / "tests", project / "tests")
    env = _env(
        PATH=f"{venv.parent}{os.pathsep}{os.environ['PATH']}",
        SPAM_TRANSPILE_CACHE_DIR=str(tmp_path / "cache"),
    )
    # Install, unittest from the root, pytest from tests/ (PYTHONPATH=../src).
    for line in lines[:3]:
        command = _fill(line, repository, repository["url"]) if "<" in line else line
        command = command.replace("python3.9 ", f"{venv} ")
        proc = subprocess.run(
            command,
            shell=True,
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert proc.returncode == 0, f"$ {command}\n{proc.stdout}\n{proc.stderr}"
        if "-m unittest" in command:
            assert proc.stderr.rstrip().endswith("OK"), proc.stderr
        if "-m pytest" in command:
            assert " passed" in proc.stdout, proc.stdout
