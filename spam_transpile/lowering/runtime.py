"""The per-module helper: what cannot be decided at transpile time.

A transpiled module that needs it gets one private name (``_spam``, or a
fresh variant when the module already uses that name) bound to a small
namespace holding only the parts the module uses. The first module of a
process to run a given helper text compiles it and keeps it in
``sys.modules`` under a key derived from the text; later modules reuse it.
The namespace's own ``__name__`` (:data:`HELPER_NAME`) is never a key of
``sys.modules``: cloudpickle therefore copies it by value into a process
that never ran the module, instead of importing a module that is not there.
The name is declared ``global`` where it is bound, so it lands in the
module's globals under ``exec(code, globals, locals)`` too. The output
still needs nothing installed at run time. The parts:

- ``kind(v)``: 1 if ``v`` is a sequence for pattern matching, 2 if a
  mapping, else 0. CPython 3.10+ keeps the answer in the type's flags
  (``Py_TPFLAGS_SEQUENCE`` is bit 5, ``Py_TPFLAGS_MAPPING`` bit 6), and
  ``kind`` reads them there. Older interpreters get the flags computed as
  CPython computes them, once per type, the cache dropped whenever
  ``abc.get_cache_token()`` changes (an ABC registration):

  - built-in (static) types have fixed flags: ``list``, ``tuple``,
    ``range``, ``memoryview``, ``deque`` and ``array`` are sequences,
    ``dict`` and ``mappingproxy`` mappings; registration never changes
    them (so ``str``, ``bytes`` and ``bytearray`` stay 0);
  - a class registered with an ABC that has a flag takes that flag
    (``Mapping.register(C)`` makes a ``Sequence`` subclass a mapping);
  - otherwise an ABC's own ``__abc_tpflags__``, or the flag of the first
    class in its MRO that has one (``class C(Mapping, Sequence)`` is a
    mapping, ``class C(str, Sequence)`` a sequence).

  The registrations are read from the registries of ``Sequence``,
  ``Mapping``, ``abc.ABC`` (where an ABC of the user's that sets its own
  ``__abc_tpflags__`` is found), the classes below them and below the
  classes registered with them (not from every class of the process). Their order, and
  whether a subclass existed when its base was registered, is not recorded
  before 3.10: the emulation takes each registration as made before any
  subclass of the registered class was created, and a class registered
  with both kinds as a mapping (README, "Known limits").
- ``cls(c)``: ``c``, or CPython's TypeError when a class pattern names a
  non-type.
- ``attrs(v, c, npos, keywords)``: match_class() of ``ceval.c`` in its
  order: ``__match_args__`` (on 3.9 derived as 3.10 derives it, for
  dataclasses, namedtuples and the node types of the ``ast`` module, whose
  ``_fields`` 3.10 gives them as ``__match_args__``) and its TypeErrors, then
  per attribute the duplicate check and ``getattr``; None at the first
  missing attribute (no match). The derived ``__match_args__`` is
  remembered per class for as long as ``getattr(c, "__match_args__")``
  gives the same object: 3.10 sets it once, when the class is made, so a
  later change to ``_fields`` or to a dataclass's fields changes nothing
  there either, while an assignment to ``__match_args__`` does.
- ``has(v, *names)``: whether ``v`` has every one of the attributes
  (``hasattr()`` each, in order): a case too wide for its line tests a
  class pattern's attributes with one call (case_headers.py).
- ``items(v, start, end)``: a star capture, ``[v[start], ...,
  v[len(v) - end - 1]]`` by indexing (a deque cannot be sliced).
- ``back(v, k)``: ``v[len(v) - k]``, for an item after a star in a nested
  sequence (CPython never uses a negative index).
- ``rest(v, keys)``: ``**rest`` of a mapping pattern.
- ``fresh(key, earlier)``: True, or the ValueError CPython raises when a
  value-pattern key repeats an earlier key of the same mapping pattern.
- ``first_equal(v, values)``: the first of ``values`` that ``v ==``, else
  None: a long run of literal cases asks it which half of the run holds
  the case for a subject of an unusual type (:mod:`.literal_switch`).
- ``store(lambda: (a, b), a=x, b=y)``: before 3.8 (no ``:=``), stores
  captures in a function's variables through their cells, which the
  lambda closes over (``co_freevars`` names them in ``__closure__``'s
  order): ``cell_contents`` is writable from 3.7 on, 3.6 has CPython's
  ``PyCell_Set``.
- ``MISSING``: the sentinel of ``getattr(v, name, MISSING)`` and
  ``v.get(key, MISSING)``. It comes last: once it is there, so is the rest.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from typing import Dict, FrozenSet, Iterable, List, Tuple

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

# ``_k(t)``: the kind of type ``t``, as CPython 3.10+ keeps it in the type's
# flags (bits 5 and 6). Before 3.10 it is worked out as the module docstring
# says. The state, ``_S[0]``, is (ABC cache token, registrations, kinds) and
# is replaced whole, never changed in place, so a thread reading it while
# another rebuilds it sees an old state or the new one, never half of one.
# The registrations are read from the registries of ``Sequence``,
# ``Mapping``, ``abc.ABC`` and the classes below them only, not from every
# class of the process: one registration costs a walk of those, and each type asked
# about afterwards its MRO. A registry changed by another thread while it
# is read (a ``WeakSet`` before 3.7) has them all read again. ``_D`` pickles as an empty list, so a helper
# pickled by value (cloudpickle) starts a new state in the other process.
_KINDS = """\
import _collections_abc as A, abc as B, array, collections as C
class _D(list): __reduce__ = lambda s: (list, ([None],))
_S, _T = _D([None]), {list: 1, tuple: 1, range: 1, memoryview: 1, C.deque: 1,
    array.array: 1, dict: 2, type(vars(type)): 2, A.Sequence: 1, A.Mapping: 2}
_g = lambda a: [] if not isinstance(a, B.ABCMeta) else list(a._abc_registry) if hasattr(
    a, "_abc_registry") else [w() for w in B._get_dump(a)[0]]
def _s(k):
    R, todo = {}, [A.Sequence, A.Mapping, B.ABC]; seen = set(todo)
    for a in todo:
        try: r = [c for c in _g(a) if c is not None and c.__flags__ & 512]
        except RuntimeError: return _s(k)
        [R.setdefault(c, []).append(a) for c in r]
        r = [c for c in type.__subclasses__(a) + r if c not in seen]
        seen.update(r); todo += r
    s = _S[0] = k, R, {}; return s
_f = lambda c, s: _T.get(c) or max(map(_k, s[1].get(c, ())), default=0) or isinstance(
    c, B.ABCMeta) and type(c.__dict__.get("__abc_tpflags__")) is int and vars(c)[
    "__abc_tpflags__"] >> 5 & 3
def _k(t):
    s, k = _S[0], B.get_cache_token(); s = s if s and s[0] == k else _s(k)
    if t not in s[2]: s[2][t] = next((x for x in (_f(c, s) for c in t.__mro__) if x), 0)
    return s[2][t]
if list.__flags__ & 32: _k = lambda t: t.__flags__ >> 5 & 3
"""

# ``kind(v)`` for the keep-lines layout: a cached type answers without
# another call.
_KIND = """\
def kind(v):
    s, t = _S[0], type(v)
    return s[2][t] if s and t in s[2] and s[0] == B.get_cache_token() else _k(t)
if list.__flags__ & 32: kind = lambda v: type(v).__flags__ >> 5 & 3
"""

_CLS = """\
def cls(c):
    if isinstance(c, type): return c
    raise TypeError("called match pattern must be a type")
"""

_ATTRS = """\
SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
def _n(c):
    if c.__flags__ & 512 or c.__module__ == "builtins": return c.__name__
    return c.__module__ + "." + c.__name__
def _d(c):
    for b in c.__mro__:
        d = b.__dict__
        if "__match_args__" in d: return d["__match_args__"]
        if "__dataclass_params__" in d and "__dataclass_fields__" in d:
            f = [x for x in d["__dataclass_fields__"].values() if x.init]
            return tuple(x.name for x in f if x._field_type.name != "_FIELD_CLASSVAR")
        if "_fields" in d and (issubclass(b, tuple) or _t(b)): return d["_fields"]
    return MISSING
def _t(b):
    m = __import__("sys").modules.get("_ast")
    return m is not None and getattr(m, b.__name__, None) is b
class _E(dict): __reduce__ = lambda s: (dict, ())
_M = _E()
def _a(c):
    g, e = getattr(c, "__match_args__", MISSING), _M.get(id(c))
    if e is not None and e[0] is c and e[1] is g: return e[2]
    old = "__match_args__" not in c.__dict__
    if old and (hasattr(c, "__dataclass_fields__") or hasattr(c, "_fields")):
        a = _d(c)
    else: a = g
    if len(_M) > 255: _M.clear()
    _M[id(c)] = c, g, a; return a
def _e(c, n, given):
    m = "%s() accepts %d positional sub-pattern%s (%d given)"
    return TypeError(m % (_n(c), n, "" if n == 1 else "s", given))
_N, _C = bool(list.__flags__ & 32), {}
def attrs(v, c, npos, kws):
    a = (getattr(c, "__match_args__", MISSING) if _N else _a(c)) if npos else ()
    e = _C.get((id(a), npos, id(kws)))
    if e is not None and e[0] is a and e[1] is kws:
        try: return e[2](v)
        except AttributeError: return None
    return _attrs(v, c, npos, kws, a)
def _attrs(v, c, npos, kws, a):
    names, out, seen = (), [], set()
    if npos:
        if a is MISSING:
            if npos > issubclass(c, SELF): raise _e(c, int(issubclass(c, SELF)), npos)
            out.append(v)
        elif type(a) is not tuple:
            m = "%s.__match_args__ must be a tuple (got %s)"
            raise TypeError(m % (_n(c), type(a).__name__))
        elif len(a) < npos: raise _e(c, len(a), npos)
        else: names = a[:npos]
    for i, name in enumerate(names + kws):
        if i < len(names) and type(name) is not str:
            m = "__match_args__ elements must be strings (got %s)"
            raise TypeError(m % type(name).__name__)
        if name in seen:
            m = "%s() got multiple sub-patterns for attribute %r"
            raise TypeError(m % (_n(c), name))
        seen.add(name); x = getattr(v, name, MISSING)
        if x is MISSING: return None
        out.append(x)
    if type(a) is tuple and not any("." in n for n in names + kws):
        if len(_C) > 255: _C.clear()
        g = __import__("operator").attrgetter(*names + kws)
        _C[id(a), npos, id(kws)] = a, kws, g if len(out) > 1 else lambda v: (g(v),)
    return out
"""

_HAS = """\
def has(v, *names): return all(hasattr(v, n) for n in names)
"""

_ITEMS = """\
def items(v, start, end): return [v[i] for i in range(start, len(v) - end)]
"""

_BACK = """\
def back(v, k): return v[len(v) - k]
"""

_REST = """\
def rest(v, keys):
    d = dict(v)
    for k in keys: del d[k]
    return d
"""

_FRESH = """\
def fresh(k, earlier):
    if k not in set(earlier): return True
    raise ValueError("mapping pattern checks duplicate key (%r)" % (k,))
"""

_FIRST_EQUAL = """\
def first_equal(v, values):
    for x in values:
        if v == x: return x
"""

_STORE = """\
def store(*f, **values):
    for name, cell in zip(f[0].__code__.co_freevars, f[0].__closure__):
        cell.cell_contents = values[name]
if __import__('sys').version_info < (3, 7):
    import ctypes as _c
    def store(*f, **values):
        for name, cell in zip(f[0].__code__.co_freevars, f[0].__closure__):
            _c.pythonapi.PyCell_Set(_c.py_object(cell), _c.py_object(values[name]))
"""

#: part name -> (parts it needs, source); in the order they are emitted
PARTS: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "_k": ((), _KINDS),
    "kind": (("_k",), _KIND),
    "cls": ((), _CLS),
    "attrs": (("MISSING",), _ATTRS),
    "has": ((), _HAS),
    "items": ((), _ITEMS),
    "back": ((), _BACK),
    "rest": ((), _REST),
    "fresh": ((), _FRESH),
    "first_equal": ((), _FIRST_EQUAL),
    "store": ((), _STORE),
    # Last: once it is there, the whole helper is.
    "MISSING": ((), "MISSING = object()\n"),
}

_PIECE = 300


def helper_source(used: Iterable[str]) -> str:
    """The helper's source with the parts ``used`` and what they need
    (``MISSING`` always: it tells whether the helper is there yet)."""
    wanted = wanted_parts(used)
    return "".join(source for part, (_, source) in PARTS.items() if part in wanted)


@functools.lru_cache(maxsize=None)
def names_read(part: str) -> FrozenSet[str]:
    """The names the source of ``part`` reads (its syntax tree's loads):
    where a module binds one that is a builtin, the readable helper takes
    the builtin first."""
    tree = ast.parse(PARTS[part][1])
    return frozenset(
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    )


def wanted_parts(used: Iterable[str]) -> List[str]:
    """The parts ``used``, those they need and ``MISSING``, in the order
    they are emitted."""
    wanted: set = {"MISSING"}

    def want(part: str) -> None:
        if part not in wanted:
            wanted.add(part)
            for dependency in PARTS[part][0]:
                want(dependency)

    for part in used:
        if part in PARTS:
            want(part)
    return [part for part in PARTS if part in wanted]


#: The helper namespace's ``__name__``: no module of that name is ever
#: imported, so pickling a helper function by reference is never attempted.
HELPER_NAME = "_spam_helper"


def helper_program(used: Iterable[str]) -> Tuple[str, str]:
    """The key the helper is kept under in ``sys.modules``, and the source
    that, run by ``exec`` with ``__name__`` :data:`HELPER_NAME`, keeps it
    there."""
    text = helper_source(used)
    key = helper_key(text)
    return key, text + _register(key)


def helper_statement(name: str, used: Iterable[str]) -> str:
    """One expression statement binding ``name`` in the module's globals to the
    helper, cheap when run again: usable on any line of any scope, with no
    ``global`` declaration, and with no builtin looked up by name (a
    function's own ``__import__`` or ``globals`` parameter cannot shadow it):
    the globals and the builtins come from a lambda's ``__globals__``."""
    key, program = helper_program(used)
    bind = (
        "import sys\n"
        f"_m = sys.modules.get({key!r})\n"
        f"if _m is None: exec({program!r}, {{'__name__': {HELPER_NAME!r}}})\n"
        f"_g[{name!r}] = sys.modules[{key!r}]\n"
    )
    run = "(b if b.__class__ is {}.__class__ else b.__dict__)['exec']"
    return (
        f"(lambda g, b: {name!r} in g or {run}({bind!r}, {{'_g': g}}))"
        "((lambda: 0).__globals__, (lambda: 0).__globals__['__builtins__'])"
    )


def _register(key: str) -> str:
    # Ends the helper's source as exec() runs it: the namespace becomes a
    # module kept under the key (the first one wins if two threads race),
    # which the binding statement then reads back.
    return (
        "_m = __import__('types').ModuleType(__name__); _m.__dict__.update(globals())\n"
        "del _m._m\n"
        f"__import__('sys').modules.setdefault({key!r}, _m)\n"
    )


def _lookup(key: str, source: str) -> str:
    # Once kept, ``__import__`` reads the module back: it compiles to fewer
    # nodes than indexing ``sys.modules``, and every module compiles this.
    return (
        f"__import__('sys').modules.get({key!r}) or "
        f"exec({source}, {{'__name__': {HELPER_NAME!r}}}) or __import__({key!r})"
    )


def helper_key(text: str) -> str:
    return "_spam_helper_" + hashlib.sha1(text.encode()).hexdigest()[:12]


def helper_statements(
    name: str, used: Iterable[str], marker: str
) -> Tuple[str, List[str]]:
    """The statement that binds ``name`` to the helper at module level, and
    the statements that carry its source (source text, one line each).

    The source travels as string constants of the module's code, each
    starting with ``marker`` and its number: ``'<marker>07...'.strip``, a
    statement that does nothing when it runs. The binding statement reads
    them from the module's code object, where every constant of the
    module's own code is, whether its line has run yet or not: so the
    pieces may stand on any line of the module, and the binding only has to
    come before the first use. ``marker`` must start no other string
    constant of the module.
    """
    key, text = helper_program(used)
    pieces = [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]
    carriers = [
        f"{marker + format(number, '02d') + piece!r}.strip"
        for number, piece in enumerate(pieces)
    ]
    start = len(marker) + 2
    # A comprehension's first iterable is evaluated in the enclosing frame:
    # here the module's, whatever the interpreter's version.
    gather = (
        f"''.join([c[{start}:] for c in sorted(c for c in __import__('sys')"
        f"._getframe(0).f_code.co_consts if type(c) is str and c[:{len(marker)}] "
        f"== {marker!r})])"
    )
    binding = f"global {name}; {name} = {_lookup(key, gather)}"
    return binding, carriers
