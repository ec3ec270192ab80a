"""The per-module helper: what cannot be decided at transpile time.

A transpiled module that needs it gets one private name (``_spam``, or a
fresh variant when the module already uses that name) bound to a small
namespace holding only the parts the module uses. The first module of a
process to run a given helper text compiles it and registers it in
``sys.modules`` under a key derived from the text; later modules reuse it.
The output still needs nothing installed at run time. The parts:

- ``kind(v)``: 1 if ``v`` is a sequence for pattern matching, 2 if a
  mapping, else 0. CPython 3.10+ keeps the answer in the type's flags
  (``Py_TPFLAGS_SEQUENCE`` is bit 5, ``Py_TPFLAGS_MAPPING`` bit 6), and
  ``kind`` reads them there. Older interpreters get an emulation computed
  once per type, its cache dropped whenever ``abc.get_cache_token()``
  changes (an ABC registration): a class that is both a Sequence and a
  Mapping is what the first class in its MRO that is only one of them is;
  ``str``, ``bytes`` and ``bytearray`` are never sequences; ``array.array``
  has the flag without being registered.
- ``cls(c)``: ``c``, or CPython's TypeError when a class pattern names a
  non-type.
- ``attrs(v, c, npos, keywords)``: match_class() of ``ceval.c`` in its
  order: ``__match_args__`` (on 3.9 derived for dataclasses and namedtuples
  as 3.10 derives it) and its TypeErrors, then per attribute the duplicate
  check and ``getattr``; None at the first missing attribute (no match).
- ``items(v, start, end)``: a star capture, ``[v[start], ...,
  v[len(v) - end - 1]]`` by indexing (a deque cannot be sliced).
- ``rest(v, keys)``: ``**rest`` of a mapping pattern.
- ``fresh(key, earlier)``: True, or the ValueError CPython raises when a
  value-pattern key repeats an earlier key of the same mapping pattern.
- ``MISSING``: the sentinel of ``getattr(v, name, MISSING)`` and
  ``v.get(key, MISSING)``.
"""

from __future__ import annotations

import hashlib
from typing import Dict, Iterable, List, Tuple

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

_KIND = """\
import _collections_abc as A, abc as B
def _k(t):
    s = not issubclass(t, (str, bytes, bytearray)) and (issubclass(t, A.Sequence) or t.__mro__[-2:][0].__module__ == 'array')
    m = issubclass(t, A.Mapping)
    if s and m:
        for b in t.__mro__:
            s, m = issubclass(b, A.Sequence), issubclass(b, A.Mapping)
            if s is not m:
                return 1 if s else 2
        return 0
    return 1 if s else 2 if m else 0
_K = {}
def _kind(v):
    t = type(v)
    if _K.get(None) != B.get_cache_token():
        _K.clear()
        _K[None] = B.get_cache_token()
    k = _K.get(t)
    if k is None:
        k = _K[t] = _k(t)
    return k
kind = (lambda v: type(v).__flags__ >> 5 & 3) if list.__flags__ & 32 else _kind
"""

_CLS = """\
def cls(c):
    if isinstance(c, type):
        return c
    raise TypeError('called match pattern must be a type')
"""

_ATTRS = """\
def _n(c):
    return c.__name__ if c.__flags__ & 512 or c.__module__ == 'builtins' else c.__module__ + '.' + c.__name__
def _d(c):
    for b in c.__mro__:
        d = b.__dict__
        if '__match_args__' in d:
            return d['__match_args__']
        if '__dataclass_params__' in d and '__dataclass_fields__' in d:
            return tuple(f.name for f in d['__dataclass_fields__'].values() if f.init and getattr(f._field_type, 'name', '') != '_FIELD_CLASSVAR')
        if '_fields' in d and issubclass(b, tuple):
            return d['_fields']
    return MISSING
def _a(c):
    if list.__flags__ & 32 or '__match_args__' in c.__dict__ or not (hasattr(c, '__dataclass_fields__') or issubclass(c, tuple) and hasattr(c, '_fields')):
        return getattr(c, '__match_args__', MISSING)
    return _d(c)
def _e(c, n, given):
    return TypeError('%s() accepts %d positional sub-pattern%s (%d given)' % (_n(c), n, '' if n == 1 else 's', given))
def attrs(v, c, npos, kws):
    names, out = (), []
    if npos:
        a = _a(c)
        if a is MISSING:
            if not issubclass(c, (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)):
                raise _e(c, 0, npos)
            if npos > 1:
                raise _e(c, 1, npos)
            out.append(v)
        elif type(a) is not tuple:
            raise TypeError('%s.__match_args__ must be a tuple (got %s)' % (_n(c), type(a).__name__))
        elif len(a) < npos:
            raise _e(c, len(a), npos)
        else:
            names = a[:npos]
    seen = set()
    for i, name in enumerate(names + kws):
        if i < len(names) and type(name) is not str:
            raise TypeError('__match_args__ elements must be strings (got %s)' % type(name).__name__)
        if name in seen:
            raise TypeError('%s() got multiple sub-patterns for attribute %r' % (_n(c), name))
        seen.add(name)
        x = getattr(v, name, MISSING)
        if x is MISSING:
            return None
        out.append(x)
    return out
"""

_ITEMS = """\
def items(v, start, end):
    return [v[i] for i in range(start, len(v) - end)]
"""

_REST = """\
def rest(v, keys):
    d = dict(v)
    for k in keys:
        del d[k]
    return d
"""

_FRESH = """\
def fresh(k, earlier):
    if k in set(earlier):
        raise ValueError('mapping pattern checks duplicate key (%r)' % (k,))
    return True
"""

#: part name -> (parts it needs, source); in the order they are emitted
PARTS: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "MISSING": ((), "MISSING = object()\n"),
    "kind": ((), _KIND),
    "cls": ((), _CLS),
    "attrs": (("MISSING",), _ATTRS),
    "items": ((), _ITEMS),
    "rest": ((), _REST),
    "fresh": ((), _FRESH),
}

_PIECE = 250


def helper_source(used: Iterable[str]) -> str:
    """The helper's source with the parts ``used`` and what they need."""
    wanted: set = set()

    def want(part: str) -> None:
        if part not in wanted:
            wanted.add(part)
            for dependency in PARTS[part][0]:
                want(dependency)

    for part in used:
        want(part)
    return "".join(source for part, (_, source) in PARTS.items() if part in wanted)


def helper_statement(name: str, used: Iterable[str]) -> str:
    """One statement binding ``name`` to the helper, cheap when run again."""
    text = helper_source(used)
    key = _key(text)
    modules = "__import__('sys').modules"
    build = (
        f"[m for m in [__import__('types').ModuleType({key!r})] "
        f"if not exec({text!r}, m.__dict__)][0]"
    )
    return f"{name} = {modules}.get({key!r}) or {modules}.setdefault({key!r}, {build})"


def _key(text: str) -> str:
    return "_spam_match_" + hashlib.sha1(text.encode()).hexdigest()[:12]


def helper_statements(name: str, used: Iterable[str]) -> List[str]:
    """Statements (source text, one line each) that bind ``name`` to the helper.

    The source travels as string pieces of a few hundred characters, so the
    statements can be spread over several existing lines; the last one
    compiles it, once per process.
    """
    text = helper_source(used)
    key = _key(text)
    pieces = [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]
    statements = [f"{name} = [{pieces[0]!r}]"]
    statements += [f"{name}.append({piece!r})" for piece in pieces[1:]]
    modules = "__import__('sys').modules"
    build = (
        f"[m for m in [__import__('types').ModuleType({key!r})] "
        f"if not exec(''.join({name}), m.__dict__)][0]"
    )
    statements.append(
        f"{name} = {modules}.get({key!r}) or {modules}.setdefault({key!r}, {build})"
    )
    return statements
