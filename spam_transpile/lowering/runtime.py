"""The per-module helper: what cannot be decided at transpile time.

A transpiled module that needs it gets one private name (``_spam``, or a
fresh variant when the module already uses that name) bound to a small
namespace with these functions, defined once per process (the first module
compiles :data:`HELPER_SOURCE` and registers it in ``sys.modules`` under a
versioned key; every later module reuses it), so the output still needs
nothing installed at run time:

- ``kind(v)``: 1 if ``v`` is a sequence for pattern matching, 2 if a
  mapping, else 0. CPython 3.10+ keeps the answer in the type's flags
  (``Py_TPFLAGS_SEQUENCE``/``Py_TPFLAGS_MAPPING``), which ``kind`` reads
  there; older interpreters get an emulation cached per type and dropped
  whenever ``abc.get_cache_token()`` says an ABC registration happened.
- ``cls(c)``: ``c``, or CPython's TypeError when a class pattern names a
  non-type.
- ``attrs(v, c, npos, keywords)``: the attribute values a class pattern
  matches against, in match_class()'s order and with its TypeErrors
  (``__match_args__`` on 3.9 derived for dataclasses and namedtuples as 3.10
  derives it), or None when an attribute is missing (no match).
- ``items(v, start, end)``: ``[v[start], ..., v[len(v) - end - 1]]`` for a
  star capture, by indexing (a deque cannot be sliced).
- ``rest(v, keys)``: ``**rest`` of a mapping pattern.
- ``keys(*keys)``: True, or the ValueError/TypeError CPython raises for
  duplicate or unhashable value-pattern keys.
- ``MISSING``: the sentinel of ``getattr(v, name, MISSING)``.
"""

from __future__ import annotations

import hashlib
from typing import List

# Instances of these (and of their subclasses) match one positional
# sub-pattern against the whole subject (PEP 634, class patterns).
MATCH_SELF_TYPES = (
    "bool",
    "bytearray",
    "bytes",
    "dict",
    "float",
    "frozenset",
    "int",
    "list",
    "set",
    "str",
    "tuple",
)

HELPER_SOURCE = """\
import _collections_abc as abc, sys
MISSING = object()
SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
NEW = bool(list.__flags__ & 32)


def raise_(exc):
    raise exc


def _kind_of(t):
    # Before 3.10: the flag a type would have. A class that is both a
    # Sequence and a Mapping is what the first class in its MRO that is
    # only one of them is; str/bytes/bytearray are never sequences; array
    # has the flag without being registered.
    seq = not issubclass(t, (str, bytes, bytearray)) and (
        issubclass(t, abc.Sequence) or t.__mro__[-2:][0].__module__ == "array"
    )
    mapping = issubclass(t, abc.Mapping)
    if seq and mapping:
        for base in t.__mro__:
            s, m = issubclass(base, abc.Sequence), issubclass(base, abc.Mapping)
            if s is not m:
                return 1 if s else 2
        return 0
    return 1 if seq else 2 if mapping else 0


_kinds = {list: 1, tuple: 1, dict: 2, str: 0, int: 0, float: 0, bytes: 0}
_token = [None]


def _old_kind(v):
    t = type(v)
    token = _get_token()
    if token != _token[0]:
        _kinds.clear()
        _kinds.update({list: 1, tuple: 1, dict: 2})
        _token[0] = token
    try:
        return _kinds[t]
    except KeyError:
        _kinds[t] = k = _kind_of(t)
        return k


_get_token = __import__("abc").get_cache_token
kind = (lambda v: type(v).__flags__ >> 5 & 3) if NEW else _old_kind


def cls(c):
    if isinstance(c, type):
        return c
    raise TypeError("called match pattern must be a type")


def _name(c):
    if c.__flags__ & 512 or c.__module__ == "builtins":
        return c.__name__
    return c.__module__ + "." + c.__name__


def _derived(c):
    # 3.10 gives dataclasses and namedtuples __match_args__; 3.9 does not.
    for b in c.__mro__:
        d = b.__dict__
        if "__match_args__" in d:
            return d["__match_args__"]
        if "__dataclass_params__" in d and "__dataclass_fields__" in d:
            return tuple(
                f.name
                for f in d["__dataclass_fields__"].values()
                if f.init and getattr(f._field_type, "name", "") != "_FIELD_CLASSVAR"
            )
        if "_fields" in d and issubclass(b, tuple):
            return d["_fields"]
    return MISSING


def _match_args(c):
    if NEW or "__match_args__" in c.__dict__:
        return getattr(c, "__match_args__", MISSING)
    if hasattr(c, "__dataclass_fields__") or (
        issubclass(c, tuple) and hasattr(c, "_fields")
    ):
        return _derived(c)
    return getattr(c, "__match_args__", MISSING)


def _accepts(c, allowed, given):
    s = "" if allowed == 1 else "s"
    return TypeError(
        "%s() accepts %d positional sub-pattern%s (%d given)"
        % (_name(c), allowed, s, given)
    )


def attrs(v, c, npos, keywords):
    names = ()
    self_match = False
    if npos:
        args = _match_args(c)
        if args is MISSING:
            self_match = issubclass(c, SELF)
            if npos > (1 if self_match else 0):
                raise _accepts(c, 1 if self_match else 0, npos)
        else:
            if type(args) is not tuple:
                raise TypeError(
                    "%s.__match_args__ must be a tuple (got %s)"
                    % (_name(c), type(args).__name__)
                )
            if len(args) < npos:
                raise _accepts(c, len(args), npos)
            names = args[:npos]
    values = [v] if self_match else []
    seen = set()
    for i, name in enumerate(names + tuple(keywords)):
        if i < len(names) and type(name) is not str:
            raise TypeError(
                "__match_args__ elements must be strings (got %s)"
                % type(name).__name__
            )
        if name in seen:
            raise TypeError(
                "%s() got multiple sub-patterns for attribute %r" % (_name(c), name)
            )
        seen.add(name)
        value = getattr(v, name, MISSING)
        if value is MISSING:
            return None
        values.append(value)
    return values


def items(v, start, end):
    return [v[i] for i in range(start, len(v) - end)]


def rest(v, keys):
    out = dict(v)
    for key in keys:
        del out[key]
    return out


def keys(*ks):
    seen = set()
    for k in ks:
        if k in seen:
            raise ValueError("mapping pattern checks duplicate key (%r)" % (k,))
        seen.add(k)
    return True
"""

HELPER_KEY = (
    "_spam_match_helper_" + hashlib.sha1(HELPER_SOURCE.encode()).hexdigest()[:12]
)


def helper_statements(name: str) -> List[str]:
    """Statements (source text, one line each) that bind ``name`` to the helper.

    The source travels as string pieces of a few hundred characters, so the
    statements can be spread over several existing lines; the last one
    compiles it, once per process.
    """
    text = HELPER_SOURCE
    pieces = [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]
    statements = [f"{name} = [{pieces[0]!r}]"]
    statements += [f"{name}.append({piece!r})" for piece in pieces[1:]]
    modules = "__import__('sys').modules"
    build = (
        f"[m for m in [__import__('types').ModuleType({HELPER_KEY!r})] "
        f"if not exec(''.join({name}), m.__dict__)][0]"
    )
    statements.append(
        f"{name} = {modules}.get({HELPER_KEY!r}) or "
        f"{modules}.setdefault({HELPER_KEY!r}, {build})"
    )
    return statements


_PIECE = 250
