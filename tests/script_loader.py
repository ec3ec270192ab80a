"""Load a script of ``scripts/`` as a module, for tests that call into it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load_script(path: Path, name: str) -> ModuleType:
    """``path`` run as module ``name``, kept in ``sys.modules`` under it (a
    script's dataclasses look their module up there while being built)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
