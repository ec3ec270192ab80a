"""How wide the readable layout may write lines: the lengths the file's
project gives its formatter and its linter.

From the file's folder upwards to the root of its repository, the first
folder that sets one decides. The length black wraps at: ``line-length`` in
``[tool.spam-transpile]``, ``[tool.black]`` or ``[tool.ruff]`` of its
``pyproject.toml``, else ``max-line-length`` in the ``[flake8]`` section of
its ``setup.cfg``, ``tox.ini`` or ``.flake8``; the limit lines keep to:
flake8's setting where there is one, no wider than the first. With nothing
set, black's default 88 and flake8's 79. Each file looked at is reported
with the digest of its bytes, so an output made with one length is not
served from a cache once the setting changes.
"""

from __future__ import annotations

import configparser
import hashlib
from pathlib import Path
from typing import Dict, Optional, Tuple

from spam_transpile.files.config import tomllib
from spam_transpile.settings import LineLimits

DEFAULT = LineLimits()
_TOML_TABLES = ("spam-transpile", "black", "ruff")
_INI_FILES = ("setup.cfg", "tox.ini", ".flake8")


def line_limits_for(filename: str) -> Tuple[LineLimits, Dict[str, str]]:
    """The line limits for ``filename`` (a file on disk), and the files that
    decided them, each with its digest ("" for one looked for and absent)."""
    consulted: Dict[str, str] = {}
    path = Path(filename)
    if not path.is_file():
        return DEFAULT, consulted
    for folder in path.resolve().parents:
        wrap: Optional[int] = None
        lint: Optional[int] = None
        for name in ("pyproject.toml", *_INI_FILES):
            candidate = folder / name
            raw = _read(candidate)
            if raw is None:
                consulted[str(candidate)] = ""  # one made later decides
                continue
            consulted[str(candidate)] = hashlib.sha256(raw).hexdigest()
            if name == "pyproject.toml":
                wrap = _from_toml(raw)
            elif lint is None:
                lint = _from_ini(raw)
        if wrap is not None or lint is not None:
            width = wrap if wrap is not None else lint
            assert width is not None
            return LineLimits(width, min(width, lint or width)), consulted
        if (folder / ".git").exists() or (folder / ".hg").is_dir():
            break
    return DEFAULT, consulted


def _read(path: Path) -> Optional[bytes]:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _from_toml(raw: bytes) -> Optional[int]:
    if tomllib is None:  # pragma: no cover - 3.9/3.10 without tomli
        return None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # the command line reports a broken file of ours
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    for table in _TOML_TABLES:
        settings = tool.get(table)
        if isinstance(settings, dict):
            value = settings.get("line-length", settings.get("line_length"))
            if isinstance(value, int) and _usable(value):
                return value
    return None


def _from_ini(raw: bytes) -> Optional[int]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(raw.decode("utf-8"))
        value = parser.get("flake8", "max-line-length", fallback=None)
        if value is None:
            value = parser.get("flake8", "max_line_length", fallback=None)
    except (configparser.Error, UnicodeDecodeError):
        return None
    if value is not None and value.strip().isdigit() and _usable(int(value)):
        return int(value)
    return None


def _usable(value: int) -> bool:
    return not isinstance(value, bool) and 40 <= value <= 400
