"""The readable layout wraps generated lines at the project's configured
line length (spam_transpile/files/line_length.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_invoke import invoke, make_tree
from spam_transpile.files.line_length import DEFAULT, line_limits_for
from spam_transpile.settings import LineLimits

SOURCE = """\
def route(event):
    match event:
        case {"type": "resize", "width": int(width), "height": int(height)}:
            return width * height
        case [first_command_of_the_batch, *the_rest_of_the_commands]:
            return first_command_of_the_batch, the_rest_of_the_commands
        case _:
            return None
"""


@pytest.mark.parametrize(
    "files, expected",
    [
        ({}, DEFAULT),
        ({"pyproject.toml": "[tool.black]\nline-length = 79\n"}, (79, 79)),
        ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, (100, 100)),
        ({"setup.cfg": "[flake8]\nmax-line-length = 99\n"}, (99, 99)),
        ({".flake8": "[flake8]\nmax_line_length = 72\n"}, (72, 72)),
        # black wraps at its length, flake8 checks at its own, no wider
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 88\n",
                "setup.cfg": "[flake8]\nmax-line-length = 79\n",
            },
            (88, 79),
        ),
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 88\n",
                "tox.ini": "[flake8]\nmax-line-length = 100\n",
            },
            (88, 88),
        ),
        (
            {
                "pyproject.toml": (
                    "[tool.spam-transpile]\nline-length = 70\n"
                    "[tool.black]\nline-length = 100\n"
                )
            },
            (70, 70),
        ),
        # nearest first: the package's own setting over the root's
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 100\n",
                "pkg/setup.cfg": "[flake8]\nmax-line-length = 79\n",
            },
            (79, 79),
        ),
        ({"pyproject.toml": "[tool.black]\nline-length = 'x'\n"}, DEFAULT),
        ({"pyproject.toml": "not toml ["}, DEFAULT),
    ],
)
def test_the_setting_is_found_as_the_tools_find_theirs(
    files: dict, expected: LineLimits, tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    make_tree(tmp_path, {**files, "pkg/mod.py": SOURCE})
    limits, consulted = line_limits_for(str(tmp_path / "pkg/mod.py"))
    assert limits == expected
    for name, text in files.items():
        path = str((tmp_path / name).resolve())
        assert path not in consulted or consulted[path] != ""


def test_in_place_output_keeps_to_the_projects_length(tmp_path: Path) -> None:
    root = make_tree(
        tmp_path,
        {"pyproject.toml": "[tool.black]\nline-length = 60\n", "mod.py": SOURCE},
    )
    (root / ".git").mkdir()
    result = invoke(["--in-place", str(root / "mod.py"), "-j", "1"])
    assert result.exit_code == 0, result.stderr
    out = (root / "mod.py").read_text("utf-8")
    assert "match event" not in out
    assert max(len(line) for line in out.splitlines()) <= 60
    black = subprocess.run(
        [
            sys.executable,
            "-m",
            "black",
            "--check",
            "-q",
            "-l",
            "60",
            str(root / "mod.py"),
        ],
        capture_output=True,
    )
    assert black.returncode == 0, black.stderr.decode()
