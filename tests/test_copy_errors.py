"""A failed copy names the file that failed: the source if reading it failed,
the destination in OUT if writing it failed (issue 10)."""

from __future__ import annotations

import builtins
import os
from pathlib import Path
from typing import Any, List

import pytest
from click.testing import CliRunner

import spam_transpile.cli as cli_module
import spam_transpile.files.write as write_module
from tests.runs import make_tree, plain


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPAM_TRANSPILE_CACHE_DIR", str(tmp_path / "cache"))


def invoke(args: List[str], cwd: Path) -> Any:
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(cli_module.main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_a_copy_that_cannot_be_written_names_the_destination(tmp_path: Path) -> None:
    make_tree(tmp_path, {"src/data.txt": b"data\n", "src/a.py": plain(1).encode()})
    (tmp_path / "out" / "data.txt").mkdir(parents=True)  # in the copy's way
    result = invoke(["src", "-o", "out", "-j", "1"], tmp_path)
    assert result.exit_code == 2
    where = os.path.join("out", "data.txt")
    assert f"{where}:1:1: error: cannot write file: Is a directory" in result.stderr
    assert "cannot read" not in result.stderr
    assert (tmp_path / "out" / "a.py").read_text("utf-8") == plain(1)


def test_a_copy_into_a_folder_that_cannot_be_made_names_the_destination(
    tmp_path: Path,
) -> None:
    make_tree(tmp_path, {"src/sub/table.csv": b"a,b\n", "src/b.txt": b"b\n"})
    make_tree(tmp_path, {"out/sub": b"a file where the folder should be"})
    result = invoke(["src", "-o", "out", "-j", "1"], tmp_path)
    assert result.exit_code == 2
    where = os.path.join("out", "sub", "table.csv")
    assert f"{where}:1:1: error: cannot write file: " in result.stderr
    assert os.path.join("src", "sub", "table.csv") not in result.stderr
    assert (tmp_path / "out" / "b.txt").read_bytes() == b"b\n"


def test_a_copy_whose_source_cannot_be_read_names_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"src/data.txt": b"data\n", "src/other.txt": b"other\n"})

    def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path).endswith("data.txt"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return builtins.open(path, *args, **kwargs)

    # root reads a chmod 000 file, so the failure is simulated.
    monkeypatch.setattr(write_module, "open", refuse, raising=False)
    result = invoke(["src", "-o", "out", "-j", "1"], tmp_path)
    assert result.exit_code == 2
    where = os.path.join("src", "data.txt")
    assert f"{where}:1:1: error: cannot read file: Permission denied" in result.stderr
    assert not (tmp_path / "out" / "data.txt").exists()
    assert (tmp_path / "out" / "other.txt").read_bytes() == b"other\n"
