"""Classes of the standard library a class pattern names through a module
the file imports (``case ast.BinOp(...)`` after ``import ast``).

The readable layout trusts them to be classes, as a reviewer does: no
``_spam.cls()`` check. Only a module of the standard library (never a
module of the program, which the tool must not import), imported by the
tool itself to look the name up; only where the module's name (or the
class's, ``from ast import BinOp``) is bound once, by a top-level import;
and only a name the tool's own copy of the module binds to a class. A
program that rebinds such a name to something else gets an ``isinstance``
TypeError instead of CPython's (README, Known limits).

The keep-lines layout knows such a class only from :mod:`.stdlib_table`,
what every CPython from the target on binds the name to (read from the
interpreters themselves): a class in each, and the positional attribute
names its pattern reads, as far as they agree (``ast.BinOp``: ``left``,
``op``, ``right`` from 3.6 on; ``ast.Constant``: ``value`` alone before
3.8). A pattern with more positional sub-patterns than they agree on goes
through the helper, which reads the running interpreter's.
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Mapping, Optional, Tuple

import libcst as cst
from spam_transpile.lowering import stdlib_table
from spam_transpile.lowering.facts import KnownClass

__all__ = [
    "exact_stdlib_class",
    "in_stdlib",
    "is_stdlib_class",
    "stdlib_match_args",
]

# Modules whose import does something besides defining names.
_NEVER = frozenset({"antigravity", "this", "idlelib", "turtle", "turtledemo"})


def is_stdlib_class(
    imports: Mapping[str, str],
    from_imports: Mapping[str, Tuple[str, str]],
    node: cst.BaseExpression,
) -> bool:
    """Whether ``node`` (a class pattern's class) names a class of a
    standard library module: ``module.Name`` where ``module`` is bound by
    ``imports``, or ``Name`` bound by ``from_imports``
    (:class:`.facts.ModuleFacts`)."""
    if isinstance(node, cst.Name):
        found = from_imports.get(node.value)
        return found is not None and _is_class(*found)
    if not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name):
        return False
    module = imports.get(node.value.value)
    return module is not None and _is_class(module, node.attr.value)


def exact_stdlib_class(
    imports: Mapping[str, str],
    from_imports: Mapping[str, Tuple[str, str]],
    node: cst.BaseExpression,
    oldest: int,
) -> Optional[KnownClass]:
    """What every CPython from 3.``oldest`` on says of the standard library
    class ``node`` names (``ast.BinOp`` after ``import ast``, ``BinOp``
    after ``from ast import BinOp``): None unless each binds it to a class;
    ``match_args`` the names they agree on, None where the helper decides
    (a type that matches itself, a ``__match_args__`` that is no tuple)."""
    if isinstance(node, cst.Name):
        found = from_imports.get(node.value)
        key = f"{found[0]}.{found[1]}" if found is not None else None
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        module = imports.get(node.value.value)
        key = f"{module}.{node.attr.value}" if module is not None else None
    else:
        key = None
    return _exact_class(key, oldest) if key is not None else None


@functools.lru_cache(maxsize=None)
def _exact_class(key: str, oldest: int) -> Optional[KnownClass]:
    runs = stdlib_table.CLASSES.get(key, ())
    covered = [run for run in runs if run[1] >= oldest]
    # one run after another, from ``oldest`` to the newest probed (later
    # versions are taken to keep the newest one's answer)
    expected = oldest
    for first, last, _ in covered:
        if first > expected:
            return None
        expected = last + 1
    if not covered or expected <= stdlib_table.NEWEST:
        return None
    answers = [names for _, _, names in covered]
    if any(names is None for names in answers):
        return KnownClass(None)
    shared: Tuple[str, ...] = ()
    for column in zip(*answers):
        if len(set(column)) != 1:
            break
        shared += (column[0],)
    return KnownClass(shared)


def stdlib_match_args(
    imports: Mapping[str, str],
    from_imports: Mapping[str, Tuple[str, str]],
    node: cst.BaseExpression,
) -> Optional[Tuple[str, ...]]:
    """The ``__match_args__`` of the standard library class ``node`` names
    (:func:`is_stdlib_class`), as the tool's own copy of it has them (a
    reviewer reads ``ast.BinOp(left, op, right)`` by those names), or None
    where it has none that is a tuple of names."""
    if isinstance(node, cst.Name):
        found = from_imports.get(node.value)
        return _match_args(*found) if found is not None else None
    if not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name):
        return None
    module = imports.get(node.value.value)
    return _match_args(module, node.attr.value) if module is not None else None


@functools.lru_cache(maxsize=None)
def _match_args(module: str, name: str) -> Optional[Tuple[str, ...]]:
    if not _is_class(module, name):
        return None
    found = getattr(getattr(_stdlib_module(module), name), "__match_args__", None)
    if type(found) is tuple and all(type(n) is str and n.isidentifier() for n in found):
        return found
    return None


@functools.lru_cache(maxsize=None)
def _is_class(module: str, name: str) -> bool:
    loaded = _stdlib_module(module)
    return loaded is not None and isinstance(getattr(loaded, name, None), type)


def _stdlib_module(module: str) -> Optional[object]:
    top = module.partition(".")[0]
    if top in _NEVER or not _in_stdlib(top):
        return None
    try:
        return importlib.import_module(module)
    except Exception:  # a module this interpreter lacks or cannot import
        return None


def in_stdlib(module: str) -> bool:
    """Whether ``module`` (absolute, dotted) is of the standard library."""
    return _in_stdlib(module.partition(".")[0])


@functools.lru_cache(maxsize=None)
def _in_stdlib(top: str) -> bool:
    # 3.10+, as every fact of the module (facts.py): the tool on 3.9 reads
    # no standard tree of a file holding match statements, and trusts none
    return top in frozenset(getattr(sys, "stdlib_module_names", ()))
