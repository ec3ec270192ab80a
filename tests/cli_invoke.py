"""The command line run in process, and small trees to run it on.

Shared by test_cli and test_config: :func:`invoke` drives
``spam_transpile.cli.main`` through click's CliRunner (use ``-j 1`` to stay in
this process).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional, Sequence

from click.testing import CliRunner

from spam_transpile import cli as cli_module

MATCHING = """\
def f(x):
    match x:
        case [a, b]:
            return a + b
        case {"k": v}:
            return v
        case _:
            return None
"""
PLAIN = "import re\nmatch = re.match('a', 'a')\nprint(match.group(0))\n"


class Result:
    def __init__(self, exit_code: int, stdout: str, stderr: str, stdout_bytes: bytes):
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr
        self.stdout_bytes = stdout_bytes


def invoke(
    args: Sequence[str], *, input: Optional[bytes] = None, cwd: Optional[Path] = None
) -> Result:
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = runner.invoke(
            cli_module.main, list(args), input=input, catch_exceptions=False
        )
    finally:
        os.chdir(old)
    return Result(result.exit_code, result.stdout, result.stderr, result.stdout_bytes)


def make_tree(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
