"""Stopping points for the kill and race tests; inert unless the variable is set.

Those tests must stop a run at a known place (half of an output written, a
file about to be replaced, a file about to be transpiled) to kill it or to
edit files under it, without guessing at timings. Set
``SPAM_TRANSPILE_TEST_HOOK`` to a JSON object:

``point``
    where to stop: ``write-created``, ``write-half``, ``write-done`` (before
    the rename), ``write-replaced`` or ``transpile`` (in the worker);
``name``
    only stop for a file of this name (``*``, the default: any file);
``nth``
    stop the nth time this process gets there (1-based, default 1);
``signal``
    a file created, holding the path, once stopped;
``resume``
    a file whose appearance lets the run go on (without it, the run waits
    to be killed).

A run never waits more than ``LONGEST_WAIT`` seconds, so a forgotten
variable cannot hang anything for good. Nothing here runs unless the
variable is set: :func:`checkpoint` returns at once.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, Optional, Union

ENV = "SPAM_TRANSPILE_TEST_HOOK"
POINTS = ("write-created", "write-half", "write-done", "write-replaced", "transpile")
LONGEST_WAIT = 300.0
_POLL = 0.01


def _load(raw: Optional[str]) -> Optional[Dict[str, Any]]:
    if not raw:
        return None
    try:
        spec = json.loads(raw)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and spec.get("point") in POINTS else None


_SPEC = _load(os.environ.get(ENV))
_reached = 0

#: True when a test set a stopping point (writes then flush in two halves)
ACTIVE = _SPEC is not None


def checkpoint(point: str, path: "Union[str, os.PathLike[str]]") -> None:
    """Stop here if the test asked to; otherwise return at once."""
    global _reached
    if _SPEC is None or _SPEC["point"] != point:
        return
    name = os.path.basename(os.fspath(path))
    if _SPEC.get("name", "*") not in ("*", name):
        return
    _reached += 1
    if _reached != int(_SPEC.get("nth", 1)):
        return
    _announce(str(_SPEC.get("signal", "")), os.fspath(path))
    _wait_for(str(_SPEC.get("resume", "")))


def _announce(signal: str, path: str) -> None:
    if not signal:
        return
    # Written whole, then renamed: the test never reads half a path.
    with open(signal + ".part", "w", encoding="utf-8") as handle:
        handle.write(path)
    os.replace(signal + ".part", signal)


def _wait_for(resume: str) -> None:
    deadline = time.monotonic() + LONGEST_WAIT
    while time.monotonic() < deadline:
        if resume and os.path.exists(resume):
            return
        time.sleep(_POLL)
