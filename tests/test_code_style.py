"""The project's own code: black-formatted, type-checked (as CI sees it),
in modules of readable size that import each other without a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

# black and mypy over the whole tree take half a minute.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True
    )


def test_code_is_black_formatted() -> None:
    result = _run("black", "--check", "--quiet", "spam_transpile", "tests", "scripts")
    assert result.returncode == 0, result.stderr


def test_package_type_checks() -> None:
    result = _run("mypy", "--ignore-missing-imports", "spam_transpile")
    assert result.returncode == 0, result.stdout + result.stderr


PACKAGE = ROOT / "spam_transpile"
# A module a newcomer can read in one sitting: past this, split it by what
# its parts do (issue 20).
MOST_LINES = 600


def _modules() -> Dict[str, Path]:
    found: Dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def test_no_module_is_too_long() -> None:
    long = {
        name: count
        for name, path in _modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not long, long


def _imported_at_load(name: str, path: Path, known: Set[str]) -> Set[str]:
    """The package's modules ``name`` imports while it loads: its top-level
    imports, also inside ``if``/``try`` blocks, but not under
    ``TYPE_CHECKING`` nor inside functions (those run later)."""
    found: Set[str] = set()

    def visit(body: List[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {module for module in found if module in known and module != name}


def test_no_import_cycle() -> None:
    """Each stage imports the ones before it, never one after: a cycle is a
    module that cannot be read (or loaded) without the others of the loop."""
    modules = _modules()
    graph = {
        name: _imported_at_load(name, path, set(modules))
        for name, path in modules.items()
    }
    cycles = []
    for start in graph:
        # depth-first from ``start``: a path back to it is a cycle
        stack: List[Tuple[str, Tuple[str, ...]]] = [(start, (start,))]
        seen: Set[str] = set()
        while stack:
            node, trail = stack.pop()
            for following in graph[node]:
                if following == start:
                    cycles.append(" -> ".join((*trail, start)))
                elif following not in seen:
                    seen.add(following)
                    stack.append((following, (*trail, following)))
    assert not cycles, cycles[:5]
