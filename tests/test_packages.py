"""The packages of fixtures/packages/ and scripts/compare_packages.py.

Each package (calc: an interpreter over dataclass nodes; router: a router of
decoded JSON events) is written with ``match`` in ``src/NAME``, by hand for
Python 3.9 in ``hand/NAME``, and driven by ``check.py``, which prints what the
package does with many inputs. Checked here:

- the source and the hand-written version are clean: mypy, flake8, black
  and ruff (default settings) find nothing;
- the hand-written version is faithful: on 3.9 it prints what the source
  prints on 3.10;
- the transpiled package, in both layouts, prints the same on 3.9, 3.8 and
  3.7 (the packages use dataclasses: 3.7 is the oldest they run on).

- the readable output for each target is what a reviewer keeps: at most
  1.2 times the hand-written lines, nothing from mypy, ruff, black, or
  flake8 at black's 88 columns.

The other figures (flake8 at 79 columns, the keep-lines output's lines) are
what the script reports, and are not asserted here.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, List

import pytest

from interpreters import require_interpreter
from script_loader import load_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "compare_packages.py"
PACKAGES = ("calc", "router")
TARGETS = ("3.9", "3.8", "3.7")
LAYOUTS = ("readable", "keep-lines")
NATIVE = "3.10"
HAND = "3.9"


@functools.lru_cache(maxsize=None)
def _script() -> ModuleType:
    return load_script(SCRIPT, "compare_packages")


def _package(name: str) -> Any:
    """The script's Package ``name`` (folder, source, hand, check)."""
    (package,) = _script().find_packages([name])
    return package


def _modules(folder: Path) -> List[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py"))


def _has_match(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Match) for node in ast.walk(tree))


def test_the_script_finds_every_package() -> None:
    names = [package.name for package in _script().find_packages()]
    assert names == sorted(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_layout_of_a_package(name: str) -> None:
    package = _package(name)
    source, hand = package.source, package.hand
    assert _modules(source) == _modules(hand)
    assert len(_modules(source)) >= 4
    assert sum(_has_match(path) for path in source.rglob("*.py")) >= 3
    assert not any(_has_match(path) for path in hand.rglob("*.py"))
    # check.py runs on every interpreter the output runs on.
    assert not _has_match(package.check)
    ast.parse(package.check.read_text(encoding="utf-8"), feature_version=(3, 6))


# --- clean code ---------------------------------------------------------------

VARIANTS = [
    pytest.param(name, variant, id=f"{name}-{variant}")
    for name in PACKAGES
    for variant in ("src", "hand")
]


def _folder(name: str, variant: str) -> Path:
    package = _package(name)
    return Path(package.source if variant == "src" else package.hand)


def _version(variant: str) -> str:
    return NATIVE if variant == "src" else HAND


@pytest.mark.slow
@pytest.mark.parametrize("name, variant", VARIANTS)
def test_mypy_finds_nothing(name: str, variant: str) -> None:
    script = _script()
    # mypy may no longer accept 3.9: then the oldest version it accepts.
    version = script.mypy_python_version(_version(variant))
    assert version is not None, "mypy does not run"
    verdict = script.mypy_errors(_folder(name, variant), version)
    assert verdict.count == 0, verdict.output


@pytest.mark.parametrize("name, variant", VARIANTS)
@pytest.mark.parametrize("max_line_length", [None, 88])
def test_flake8_finds_nothing(
    name: str, variant: str, max_line_length: int | None
) -> None:
    verdict = _script().flake8_complaints(_folder(name, variant), max_line_length)
    assert verdict.count == 0, verdict.output


@pytest.mark.parametrize("name, variant", VARIANTS)
def test_black_formatted(name: str, variant: str, tmp_path: Path) -> None:
    # The repository's black configuration targets 3.9 and skips fixtures/.
    config = tmp_path / "black.toml"
    config.write_text("", encoding="utf-8")
    verdict = _script().black_reformats(_folder(name, variant), config)
    assert verdict.count == 0, verdict.output


@pytest.mark.parametrize("name, variant", VARIANTS)
def test_ruff_finds_nothing(name: str, variant: str) -> None:
    script = _script()
    if not script.has_module("ruff"):
        pytest.skip("ruff is not installed (python -m ruff does not run)")
    verdict = script.ruff_complaints(_folder(name, variant), _version(variant))
    assert verdict.count == 0, verdict.output


# --- the readable output, as a reviewer gets it ------------------------------------

#: issue 21: the readable output within this many times the hand-written lines
MOST_LINES_OVER_HAND = 1.2


@functools.lru_cache(maxsize=None)
def _readable_output(name: str, target: str, folder: str) -> Path:
    output = Path(folder) / name / target / name
    error = _script().transpile(_package(name).source, output, target, "readable")
    assert error is None, error
    return output


@pytest.fixture(scope="module")
def readable_folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("readable"))


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PACKAGES)
def test_readable_output_is_a_package_a_reviewer_keeps(
    name: str, target: str, readable_folder: str, tmp_path: Path
) -> None:
    script = _script()
    output = _readable_output(name, target, readable_folder)
    _, lines = script.count_lines(output)
    _, hand = script.count_lines(_package(name).hand)
    assert lines <= MOST_LINES_OVER_HAND * hand, (lines, hand)
    assert script.flake8_complaints(output, 88).count == 0
    config = tmp_path / "black.toml"
    config.write_text("", encoding="utf-8")
    verdict = script.black_reformats(output, config)
    assert verdict.count == 0, verdict.output
    if script.has_module("ruff"):
        verdict = script.ruff_complaints(output, target)
        assert verdict.count == 0, verdict.output
    version = script.mypy_python_version(target)
    assert version is not None, "mypy does not run"
    verdict = script.mypy_errors(output, version)
    assert verdict.count == 0, verdict.output


# --- behaviour ------------------------------------------------------------------


def _run_check(name: str, version: str, folder: Path) -> str:
    """What check.py prints with ``name`` imported from ``folder``."""
    package = _package(name)
    status, out, err = _script().run_check(
        require_interpreter(version), package.check, folder
    )
    assert status == 0, err[-3000:]
    assert out.count("\n") > 200, out  # the driver ran through
    return str(out)


@functools.lru_cache(maxsize=None)
def _native_output(name: str) -> str:
    return _run_check(name, NATIVE, _package(name).source.parent)


def _assert_same(name: str, output: str) -> None:
    difference = _script().compare_output(_native_output(name), output)
    assert difference is None, f"{name}: {difference}"


@pytest.mark.slow
@pytest.mark.parametrize("name", PACKAGES)
def test_hand_version_behaves_like_the_source(name: str) -> None:
    _assert_same(name, _run_check(name, HAND, _package(name).hand.parent))


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PACKAGES)
def test_transpiled_package_behaves_like_the_source(
    name: str, target: str, layout: str, tmp_path: Path
) -> None:
    package = _package(name)
    output = tmp_path / name
    error = _script().transpile(package.source, output, target, layout)
    assert error is None, error
    assert not any(_has_match(path) for path in output.rglob("*.py"))
    _assert_same(name, _run_check(name, target, tmp_path))


# --- the script -----------------------------------------------------------------


def test_output_comparison_names_the_first_difference() -> None:
    compare = _script().compare_output
    assert compare("a\nb\n", "a\nb\n") is None
    assert compare("a\nb\n", "a\nc\n") == "line 2: expected 'b', got 'c'"
    assert compare("a\nb\n", "a\n") == "2 lines expected, 1 printed"


def test_markdown_table() -> None:
    script = _script()
    row = script.Row("calc", "transpiled", "3.8", "readable", 10, 12, 1, "3.10")
    row.flake8, row.flake8_88, row.black, row.ruff = 2, 0, 1, 3
    row.interpreter, row.behaviour = "3.8", "same"
    report = script.Report([row], ["a note"], {"3.8": "/bin/python3.8"})
    lines = script.render(report, True).splitlines()
    assert lines[0].startswith("| package | code | lines")
    assert lines[2] == (
        "| calc | readable 3.8 | 10/12 | 1 (3.10) | 2 | 0 | fail (1 files) | 3"
        " | same on 3.8 |"
    )
    assert "- a note" in lines


@pytest.mark.slow
@pytest.mark.targets
def test_script_reports_json(tmp_path: Path) -> None:
    env = dict(os.environ)
    for version in (NATIVE, HAND, "3.8"):
        # The script looks interpreters up as the tests do; pin the same ones.
        env["SPAM_TRANSPILE_PYTHON_" + version.replace(".", "_")] = require_interpreter(
            version
        )
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "calc", "--targets", "3.8", "--json"]
        + ["--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["ok"] is True
    rows = {(row["variant"], row["target"]): row for row in report["rows"]}
    assert set(rows) == {("source", NATIVE), ("hand", HAND), ("transpiled", "3.8")}
    assert rows["source", NATIVE]["behaviour"] == "native"
    for key in (("hand", HAND), ("transpiled", "3.8")):
        assert rows[key]["behaviour"] == "same", rows[key]
    hand = rows["hand", HAND]
    assert (hand["mypy"], hand["flake8"], hand["flake8_88"], hand["black"]) == (
        0,
        0,
        0,
        0,
    )
    transpiled = rows["transpiled", "3.8"]
    assert transpiled["layout"] == "readable"
    assert transpiled["lines"] > 0 and transpiled["total_lines"] >= transpiled["lines"]
    assert (tmp_path / "readable" / "3.8" / "calc" / "evaluate.py").is_file()


@pytest.mark.parametrize("name", PACKAGES)
def test_readable_output_reads_as_written_for_39(name: str, tmp_path: Path) -> None:
    """Issue 21: no exec'd source, no helper where the project declares the
    classes, black-stable; and a ceiling on size, to ratchet down (the goal
    is 1.2x the hand-written version: not met yet, see the closing note)."""
    package = _package(name)
    output = tmp_path / name
    assert _script().transpile(package.source, output, "3.9", "readable") is None
    texts = {p.name: p.read_text("utf-8") for p in sorted(output.rglob("*.py"))}
    assert not any("exec(" in text for text in texts.values())
    hand = sum(
        len(p.read_text("utf-8").splitlines()) for p in package.hand.rglob("*.py")
    )
    lines = sum(len(text.splitlines()) for text in texts.values())
    assert lines <= 1.5 * hand, (lines, hand)
    black = subprocess.run(
        [sys.executable, "-m", "black", "--check", "-q", "--config", os.devnull]
        + [str(p) for p in output.rglob("*.py")],
        capture_output=True,
    )
    assert black.returncode == 0, black.stderr.decode()


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, target",
    [
        ("calc", "3.9"),
        ("router", "3.9"),
        ("router", "3.7"),
        ("calc", "3.7"),
    ],
)
def test_readable_output_type_checks(name: str, target: str, tmp_path: Path) -> None:
    """Issue 21: the output type-checks where the source did."""
    script = _script()
    output = tmp_path / name
    assert script.transpile(_package(name).source, output, target, "readable") is None
    version = script.mypy_python_version(target)
    assert version is not None, "mypy does not run"
    verdict = script.mypy_errors(output, version)
    assert verdict.count == 0, verdict.output
