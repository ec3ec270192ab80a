"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit.

pre-commit comes from the running interpreter when importable, else it is
installed from PyPI into a temporary virtual environment (skipped, with the
reason, when that is impossible). The checkout is snapshotted into a
temporary git repository, so uncommitted and new files are part of what
is tried, and ``pre-commit try-repo`` runs both hooks on a second
temporary repository holding a file with a match statement:

1. ``spam-transpile-check`` fails and names the file;
2. ``spam-transpile`` rewrites it in place (pre-commit reports "files were
   modified") into code that behaves the same;
3. ``spam-transpile-check`` then passes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Dict, List

import pytest

from tests.git_repos import WITH_MATCH, behaviour, commit_snapshot, git

ROOT = Path(__file__).resolve().parent.parent

WITHOUT_MATCH = "import re\nmatch = re.match('a', 'abc')\n"


@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    """The command that runs pre-commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        import pre_commit  # noqa: F401

        return [sys.executable, "-m", "pre_commit"]
    except ImportError:
        pass
    home = tmp_path_factory.mktemp("pre-commit-venv")
    try:
        venv.create(home, with_pip=True)
    except Exception as exc:  # no ensurepip, read-only file system, ...
        pytest.skip(f"cannot create a virtual environment for pre-commit: {exc}")
    python = home / "bin" / "python"
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "pre-commit"],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    if proc.returncode != 0:
        pytest.skip(
            f"cannot install pre-commit from PyPI: {proc.stderr.strip()[-300:]}"
        )
    return [str(python), "-m", "pre_commit"]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed copy of the working tree, as pre-commit will clone it."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    commit_snapshot(snapshot)
    return snapshot


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "user-repo"
    repo.mkdir()
    (repo / "shapes.py").write_text(WITH_MATCH, encoding="utf-8")
    (repo / "plain.py").write_text(WITHOUT_MATCH, encoding="utf-8")
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    return repo


def _try_repo(
    pre_commit: List[str], hook_repo: Path, hook: str, repo: Path, home: Path
):
    env: Dict[str, str] = dict(
        os.environ,
        PRE_COMMIT_HOME=str(home),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        SPAM_TRANSPILE_CACHE_DIR=str(home / "spam-cache"),
    )
    env.pop("PRE_COMMIT", None)  # in case the suite itself runs under pre-commit
    return subprocess.run(
        [
            *pre_commit,
            "try-repo",
            str(hook_repo),
            hook,
            "--all-files",
            "--color",
            "never",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_hooks_file_declares_a_rewriting_and_a_checking_hook() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text("utf-8")
    assert "- id: spam-transpile\n" in text
    assert "entry: spam-transpile --in-place" in text
    assert "- id: spam-transpile-check\n" in text
    assert "entry: spam-transpile --check" in text
    # Every supported target is named. The readable layout's black comes with
    # spam-transpile itself (a dependency), not from additional_dependencies.
    descriptions = [line for line in text.splitlines() if "description:" in line]
    assert len(descriptions) == 2
    for description in descriptions:
        assert "3.6, 3.7, 3.8 or 3.9" in description
    assert "additional_dependencies" not in text


@pytest.mark.slow
def test_check_hook_fails_then_rewrite_hook_fixes_then_check_passes(
    pre_commit: List[str], hook_repo: Path, user_repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "pre-commit-home"

    check = _try_repo(pre_commit, hook_repo, "spam-transpile-check", user_repo, home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "Failed" in check.stdout
    assert "would transpile shapes.py" in check.stdout
    assert "plain.py" not in check.stdout.split("- exit code")[-1]
    assert (user_repo / "shapes.py").read_text("utf-8") == WITH_MATCH

    rewrite = _try_repo(pre_commit, hook_repo, "spam-transpile", user_repo, home)
    assert rewrite.returncode == 1, rewrite.stdout + rewrite.stderr
    assert "files were modified by this hook" in rewrite.stdout
    rewritten = (user_repo / "shapes.py").read_text("utf-8")
    assert "match value:" not in rewritten
    assert behaviour(rewritten) == behaviour(WITH_MATCH)
    assert (user_repo / "plain.py").read_text("utf-8") == WITHOUT_MATCH

    again = _try_repo(pre_commit, hook_repo, "spam-transpile-check", user_repo, home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout
