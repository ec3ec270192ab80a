"""How the emitted code spells CPython's pattern-matching primitives.

Every primitive is an expression template, so a transpiled file needs no
import, no helper function and no runtime package. Templates name builtins as
``{len}`` etc. and are filled through :class:`~spam_transpile.lowering.names.Names`,
which spells a builtin the module shadows as ``__import__('builtins').len``.

The facts mirrored here come from CPython 3.10's ``ceval.c`` (``match_class``,
``match_keys``) and ``compile.c`` (``compiler_pattern_*``), as observed on
3.10-3.13.
"""

from __future__ import annotations

import string
from typing import Dict

from spam_transpile.lowering.names import Names

# PEP 634, class patterns: instances of these (and of their subclasses) match
# a single positional sub-pattern against the whole subject.
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

# ``_collections_abc`` is imported by ``os`` at startup on every CPython we
# target, so this is a dictionary lookup, and it leaves no name behind.
ABC = "{__import__}('_collections_abc')"

# CPython 3.10 decides "sequence or mapping" from a type flag that each class
# inherits from the first class in its MRO that has one (registration sets it
# too). isinstance() alone cannot tell which one wins when a class is both, so
# walk the MRO for the first class that is one and not the other.
_SEQUENCE_WINS = (
    "{next}(({s} for {b} in {type}({v}).__mro__ for {s}, {m} in "
    "(({issubclass}({b}, "
    + ABC
    + ".Sequence), {issubclass}({b}, "
    + ABC
    + ".Mapping)),)"
    " if {s} is not {m}), False)"
)

_NOT_TEXT = "not {isinstance}({v}, ({str}, {bytes}, {bytearray}))"

# array.array has CPython 3.10's sequence flag but was never registered with
# collections.abc.Sequence. Its subclasses keep it as their solid base, the
# last class before ``object`` in the MRO; for ``object`` itself the slice
# gives ``object``.
_ARRAY = "{type}({v}).__mro__[-2:][0].__module__ == 'array'"

# Exact builtin types answer at once; only other types pay for the ABC checks.
_NEVER_SEQUENCE = (
    "({dict}, {str}, {bytes}, {int}, {float}, {bool}, {bytearray}, {set}, {frozenset})"
)
_NEVER_MAPPING = "({list}, {tuple}, {str}, {bytes}, {int}, {float}, {bool}, {bytearray}, {set}, {frozenset})"

# CPython 3.10+ keeps the answer in the type's flags (Py_TPFLAGS_SEQUENCE,
# 1 << 5, and Py_TPFLAGS_MAPPING, 1 << 6), which MATCH_SEQUENCE/MATCH_MAPPING
# read. Output that runs on 3.10+ reads them too: exact, and fast. Older
# interpreters have neither bit set on ``list``/``dict`` and use the emulation.
_FLAG_SEQUENCE = "{type}({v}).__flags__ & 32 != 0 if {list}.__flags__ & 32 else "
_FLAG_MAPPING = "{type}({v}).__flags__ & 64 != 0 if {dict}.__flags__ & 64 else "

IS_SEQUENCE = (
    "("
    + _FLAG_SEQUENCE
    + "{type}({v}) is {list} or {type}({v}) is {tuple} or ({v} is not None and {type}({v}) not in "
    + _NEVER_SEQUENCE
    + " and "
    + _NOT_TEXT
    + " and ({isinstance}({v}, "
    + ABC
    + ".Sequence) or "
    + _ARRAY
    + ") and (not {isinstance}({v}, "
    + ABC
    + ".Mapping) or "
    + _SEQUENCE_WINS
    + ")))"
)

IS_MAPPING = (
    "("
    + _FLAG_MAPPING
    + "({type}({v}) is {dict} or ({v} is not None and {type}({v}) not in "
    + _NEVER_MAPPING
    + " and {isinstance}({v}, "
    + ABC
    + ".Mapping) and (not {isinstance}({v}, "
    + ABC
    + ".Sequence) or not "
    + _NOT_TEXT
    + " or not "
    + _SEQUENCE_WINS
    + "))))"
)

# Raise from inside an expression: throwing into a fresh, unstarted generator
# re-raises the exception at once, with no helper function.
RAISE = "(_ for _ in ()).throw({exc})"

# tp_name, which CPython's messages use: bare for classes defined in Python and
# for builtins, "module.Name" for other C types (collections.deque, ...).
TYPE_NAME = (
    "({c}.__name__ if {c}.__flags__ & 512 or {c}.__module__ == 'builtins' "
    "else {c}.__module__ + '.' + {c}.__name__)"
)

IS_A_TYPE = (
    "({isinstance}({c}, {type}) or "
    + RAISE.replace("{exc}", "{TypeError}('called match pattern must be a type')")
    + ")"
)

# Python 3.10 gives dataclasses and namedtuples a __match_args__ of their
# own; 3.9 and older do not. Derive it as 3.10 does: for each class in the
# MRO, its own __match_args__, else its dataclass init fields (3.10 takes
# InitVar fields too, never ClassVar ones), else a namedtuple's _fields.
_DATACLASS_FIELDS = (
    "{tuple}({f}.name for {f} in {b}.__dict__['__dataclass_fields__'].values() "
    "if {f}.init and {getattr}({f}._field_type, 'name', '') != '_FIELD_CLASSVAR')"
)
_IS_DATACLASS = (
    "'__dataclass_params__' in {b}.__dict__ and '__dataclass_fields__' in {b}.__dict__"
)

_OWN_MATCH_ARGS = (
    "{next}(({r} for {b} in {c}.__mro__ for {r} in ("
    "{b}.__dict__['__match_args__'] if '__match_args__' in {b}.__dict__ else "
    + _DATACLASS_FIELDS
    + " if "
    + _IS_DATACLASS
    + " else "
    "{b}.__dict__['_fields'] if '_fields' in {b}.__dict__ and {issubclass}({b}, {tuple}) "
    "else {d},) if {r} is not {d}), {d})"
)

# Fast paths first: a class's own __match_args__ (every class on 3.10+, and
# user-written ones), then a class decorated with @dataclass itself; only
# subclasses of dataclasses and namedtuples on 3.9 walk the MRO.
MATCH_ARGS_LOOKUP = (
    "({getattr}({c}, '__match_args__') if '__match_args__' in {c}.__dict__ else "
    + _DATACLASS_FIELDS.replace("{b}", "{c}")
    + " if "
    + _IS_DATACLASS.replace("{b}", "{c}")
    + " else "
    + _OWN_MATCH_ARGS
    + " if {hasattr}({c}, '__dataclass_fields__') or "
    "({issubclass}({c}, {tuple}) and {hasattr}({c}, '_fields')) "
    "else {getattr}({c}, '__match_args__', {d}))"
)

_ACCEPTS = (
    "{TypeError}('%s() accepts %d positional sub-pattern%s (%d given)' % ("
    + TYPE_NAME
    + ", {allowed}, '' if {allowed} == 1 else 's', {npos}))"
)

_NOT_A_TUPLE = (
    "{TypeError}('%s.__match_args__ must be a tuple (got %s)' % ("
    + TYPE_NAME
    + ", {type}({m}).__name__))"
)


def fill(template: str, names: Names, **operands: str) -> str:
    """Fill ``template``: operands by keyword, any other field as a builtin."""
    fields = {field for _, field, _, _ in string.Formatter().parse(template) if field}
    values: Dict[str, str] = {}
    for field in fields:
        values[field] = operands[field] if field in operands else names.builtin(field)
    return template.format(**values)


def raise_(names: Names, exc: str) -> str:
    return fill(RAISE, names, exc=exc)


def is_sequence(names: Names, v: str) -> str:
    return fill(
        IS_SEQUENCE, names, v=v, s=names.temp("s"), m=names.temp("m"), b=names.temp("b")
    )


def is_mapping(names: Names, v: str) -> str:
    return fill(
        IS_MAPPING, names, v=v, s=names.temp("s"), m=names.temp("m"), b=names.temp("b")
    )


def is_a_type(names: Names, c: str) -> str:
    return fill(IS_A_TYPE, names, c=c)


def type_name(names: Names, c: str) -> str:
    return fill(TYPE_NAME, names, c=c)


def match_args_lookup(names: Names, c: str, d: str) -> str:
    """``c.__match_args__`` as CPython 3.10 sees it (3.9's dataclasses and
    namedtuples included), or the sentinel ``d`` when the class has none."""
    return fill(
        MATCH_ARGS_LOOKUP,
        names,
        c=c,
        d=d,
        r=names.temp("r"),
        b=names.temp("b"),
        f=names.temp("f"),
    )


def match_args_usable(names: Names, c: str, m: str, d: str, npos: int) -> str:
    """True if ``npos`` positional sub-patterns fit class ``c``; else raises.

    ``m`` holds the lookup's result (``d``: no ``__match_args__``, and then
    only a self-matching builtin takes its single sub-pattern); the errors
    are match_class()'s in ceval.c, with its messages.
    """
    length = f"{names.builtin('len')}({m})"
    too_many = raise_(names, fill(_ACCEPTS, names, c=c, allowed=length, npos=str(npos)))
    not_tuple = raise_(names, fill(_NOT_A_TUPLE, names, c=c, m=m))
    with_match_args = (
        f"(({names.builtin('type')}({m}) is {names.builtin('tuple')} or {not_tuple}) "
        f"and ({length} >= {npos} or {too_many}))"
    )
    self_types = ", ".join(names.builtin(t) for t in MATCH_SELF_TYPES)
    is_self = f"{names.builtin('issubclass')}({c}, ({self_types}))"
    if npos == 1:
        refuse = raise_(names, fill(_ACCEPTS, names, c=c, allowed="0", npos="1"))
        without = f"({is_self} or {refuse})"
    else:
        allowed = f"(1 if {is_self} else 0)"
        without = raise_(
            names, fill(_ACCEPTS, names, c=c, allowed=allowed, npos=str(npos))
        )
    return f"({without} if {m} is {d} else {with_match_args})"


def match_arg_name(names: Names, match_args: str, index: int) -> str:
    """``match_args[index]``, raising CPython's TypeError if it is not a str."""
    item = f"{match_args}[{index}]"
    exc = (
        f"{names.builtin('TypeError')}('__match_args__ elements must be strings "
        f"(got %s)' % {names.builtin('type')}({item}).__name__)"
    )
    return f"({item} if {names.builtin('type')}({item}) is {names.builtin('str')} else {raise_(names, exc)})"


def duplicate_attribute(names: Names, c: str, attribute: str) -> str:
    exc = (
        f"{names.builtin('TypeError')}('%s() got multiple sub-patterns for attribute %r'"
        f" % ({type_name(names, c)}, {attribute}))"
    )
    return raise_(names, exc)


def duplicate_key(names: Names, key: str) -> str:
    exc = (
        f"{names.builtin('ValueError')}('mapping pattern checks duplicate key (%r)'"
        f" % ({key},))"
    )
    return raise_(names, exc)
