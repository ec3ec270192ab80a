"""Lower one case's pattern to steps and captures (see :mod:`spam_transpile.lowering.ir`).

One ``lower_<kind>`` function per pattern kind, each taking the pattern and the
expression that holds its subject, in the order CPython's pattern compiler
(``compiler_pattern_*`` in 3.10's ``compile.c``) does its work:

- sequence: flag check, ``len``, then either one iteration of the subject
  (no star, or a named star: ``UNPACK_SEQUENCE``/``UNPACK_EX``) or, with a
  ``*_`` wildcard, ``s[i]`` / ``s[len(s) - k]`` per non-wildcard element,
  each matched as soon as it is read;
- mapping: flag check, ``len(s) >= #keys``, one ``s.get(key, dummy)`` per key
  (with the duplicate-key check between them), ``**rest``, then sub-patterns;
- class: type check, isinstance, every attribute read, then sub-patterns.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.lowering import runtime
from spam_transpile.lowering.ir import (
    Alternatives,
    Branch,
    Check,
    Let,
    LoweredPattern,
    Step,
    Unpack,
)
from spam_transpile.lowering.names import Names

Code = Callable[[cst.CSTNode], str]
Captures = List[Tuple[str, str]]

LITERAL_NODES = (
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.UnaryOperation,
    cst.BinaryOperation,
)


class Lowering:
    """Lowers patterns of one module; ``code`` renders an expression node."""

    def __init__(self, names: Names, code: Code) -> None:
        self.names = names
        self.code = code

    def lower_case(self, pattern: cst.MatchPattern, subject: str) -> LoweredPattern:
        steps: List[Step] = []
        captures: Captures = []
        self.lower(pattern, subject, steps, captures)
        return LoweredPattern(tuple(steps), tuple(captures))

    def lower(
        self, pattern: cst.MatchPattern, v: str, steps: List[Step], captures: Captures
    ) -> None:
        if isinstance(pattern, cst.MatchAs):
            lower_as(self, pattern, v, steps, captures)
        elif isinstance(pattern, cst.MatchValue):
            lower_value(self, pattern, v, steps, captures)
        elif isinstance(pattern, cst.MatchSingleton):
            lower_singleton(self, pattern, v, steps, captures)
        elif isinstance(pattern, cst.MatchOr):
            lower_or(self, pattern, v, steps, captures)
        elif isinstance(pattern, (cst.MatchList, cst.MatchTuple)):
            lower_sequence(self, pattern, v, steps, captures)
        elif isinstance(pattern, cst.MatchMapping):
            lower_mapping(self, pattern, v, steps, captures)
        elif isinstance(pattern, cst.MatchClass):
            lower_class(self, pattern, v, steps, captures)
        else:  # pragma: no cover - LibCST has no other pattern node
            raise TypeError(f"unknown pattern node {type(pattern).__name__}")

    # -- helpers shared by the kinds -------------------------------------------

    def expr(self, node: cst.BaseExpression) -> str:
        """Source of ``node`` as a self-contained (parenthesized) expression."""
        text = self.code(node.with_changes(lpar=[], rpar=[])).strip()
        if isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float)):
            return text
        if isinstance(node, (cst.SimpleString, cst.Imaginary)) and "\n" not in text:
            return text
        return f"({text})"

    def let(self, steps: List[Step], hint: str, expr: str) -> str:
        temp = self.names.temp(hint)
        steps.append(Let(temp, expr))
        return temp

    def b(self, name: str) -> str:
        return self.names.builtin(name)


def is_wildcard(pattern: cst.MatchPattern) -> bool:
    return (
        isinstance(pattern, cst.MatchAs)
        and pattern.pattern is None
        and pattern.name is None
    )


def lower_as(
    low: Lowering, p: cst.MatchAs, v: str, steps: List[Step], caps: Captures
) -> None:
    if p.pattern is not None:
        low.lower(p.pattern, v, steps, caps)
    if p.name is not None:
        caps.append((p.name.value, v))


def lower_value(
    low: Lowering, p: cst.MatchValue, v: str, steps: List[Step], caps: Captures
) -> None:
    # PEP 634: a value pattern succeeds if ``subject == value``, with the
    # subject on the left (that decides which __eq__ runs first).
    steps.append(Check(f"{v} == {low.expr(p.value)}"))


def lower_singleton(
    low: Lowering, p: cst.MatchSingleton, v: str, steps: List[Step], caps: Captures
) -> None:
    steps.append(Check(f"{v} is {p.value.value}"))


def lower_or(
    low: Lowering, p: cst.MatchOr, v: str, steps: List[Step], caps: Captures
) -> None:
    lowered: List[Tuple[List[Step], Captures]] = []
    for element in p.patterns:
        branch_steps: List[Step] = []
        branch_caps: Captures = []
        low.lower(element.pattern, v, branch_steps, branch_caps)
        lowered.append((branch_steps, branch_caps))
    # Every alternative binds the same names (checked by validate), except
    # one that always raises (``int(a, b)``) and so never gets to bind.
    names: List[str] = []
    for _, branch_caps in lowered:
        names += [name for name, _ in branch_caps if name not in names]
    outputs = tuple(low.names.temp("alt") for _ in names)
    branches = []
    for branch_steps, branch_caps in lowered:
        values = dict(branch_caps)
        # A branch that always raises (``int(a, b)``) never supplies its names.
        branches.append(
            Branch(tuple(branch_steps), tuple(values.get(n, "None") for n in names))
        )
    steps.append(Alternatives(tuple(branches), outputs))
    caps.extend(zip(names, outputs))


def lower_sequence(
    low: Lowering,
    p: Union[cst.MatchList, cst.MatchTuple],
    v: str,
    steps: List[Step],
    caps: Captures,
) -> None:
    elements: Sequence[Union[cst.MatchSequenceElement, cst.MatchStar]] = p.patterns
    size = len(elements)
    star: Optional[int] = next(
        (i for i, e in enumerate(elements) if isinstance(e, cst.MatchStar)), None
    )
    steps.append(Check(runtime.is_sequence(low.names, v)))
    length = f"{low.b('len')}({v})"
    if star is None:
        steps.append(Check(f"{length} == {size}"))
    elif size > 1:
        steps.append(Check(f"{length} >= {size - 1}"))
    wild = [
        (e.name is None) if isinstance(e, cst.MatchStar) else is_wildcard(e.value)
        for e in elements
    ]
    if all(wild):
        return
    if star is not None and wild[star]:
        _lower_sequence_by_index(low, elements, star, v, steps, caps, wild)
    else:
        _lower_sequence_by_unpacking(low, elements, star, v, steps, caps)


def _lower_sequence_by_index(
    low: Lowering,
    elements: Sequence[Union[cst.MatchSequenceElement, cst.MatchStar]],
    star: int,
    v: str,
    steps: List[Step],
    caps: Captures,
    wild: List[bool],
) -> None:
    size = len(elements)
    for i, element in enumerate(elements):
        if wild[i]:
            continue
        assert isinstance(element, cst.MatchSequenceElement)
        # CPython indexes from the front before the star and with a
        # non-negative ``len(s) - k`` after it (calling len() again), never
        # with a negative index; each item is matched as soon as it is read.
        index = str(i) if i < star else f"{low.b('len')}({v}) - {size - i}"
        item = low.let(steps, "item", f"{v}[{index}]")
        low.lower(element.value, item, steps, caps)


def _lower_sequence_by_unpacking(
    low: Lowering,
    elements: Sequence[Union[cst.MatchSequenceElement, cst.MatchStar]],
    star: Optional[int],
    v: str,
    steps: List[Step],
    caps: Captures,
) -> None:
    temps = tuple(low.names.temp("item") for _ in elements)
    steps.append(Unpack(v, temps, star))
    for element, temp in zip(elements, temps):
        if isinstance(element, cst.MatchStar):
            if element.name is not None:
                caps.append((element.name.value, temp))
        else:
            low.lower(element.value, temp, steps, caps)


def _is_literal_key(key: cst.BaseExpression) -> bool:
    return not isinstance(key, (cst.Name, cst.Attribute))


def lower_mapping(
    low: Lowering, p: cst.MatchMapping, v: str, steps: List[Step], caps: Captures
) -> None:
    steps.append(Check(runtime.is_mapping(low.names, v)))
    elements = list(p.elements)
    if elements:
        steps.append(Check(f"{low.b('len')}({v}) >= {len(elements)}"))
    keys: List[str] = []
    for element in elements:
        text = low.expr(element.key)
        # Value-pattern keys are looked up once, all before the first get();
        # multi-line literals get a temporary so the header stays one line.
        if not _is_literal_key(element.key) or "\n" in text:
            text = low.let(steps, "key", text)
        keys.append(text)
    values: List[str] = []
    if elements:
        get = low.let(steps, "get", f"{v}.get")
        dummy = low.let(steps, "missing", f"{low.b('object')}()")
        checks_duplicates = not all(_is_literal_key(e.key) for e in elements)
        for i, key in enumerate(keys):
            if checks_duplicates:
                _check_key_unique(low, keys, i, steps)
            value = low.let(steps, "value", f"{get}({key}, {dummy})")
            steps.append(Check(f"{value} is not {dummy}"))
            values.append(value)
    for element, value in zip(elements, values):
        low.lower(element.pattern, value, steps, caps)
    if p.rest is not None:
        # compiler_pattern_mapping: COPY_DICT_WITHOUT_KEYS runs only once every
        # value sub-pattern has matched.
        rest = low.let(steps, "rest", f"{{**{v}}}")
        if keys:
            pops = ", ".join(f"{rest}.pop({key})" for key in keys)
            steps.append(Check(f"[{pops}]"))
        caps.append((p.rest.value, rest))


def _check_key_unique(
    low: Lowering, keys: List[str], i: int, steps: List[Step]
) -> None:
    # match_keys() in ceval.c puts every key in a set before looking it up,
    # so an unhashable key raises TypeError and a repeated one ValueError.
    key = keys[i]
    if i == 0:
        steps.append(Check(f"{low.b('hash')}({key}) is not None"))
        return
    seen = "{" + ", ".join(keys[:i]) + "}"
    steps.append(
        Check(f"({key} not in {seen} or {runtime.duplicate_key(low.names, key)})")
    )


def lower_class(
    low: Lowering, p: cst.MatchClass, v: str, steps: List[Step], caps: Captures
) -> None:
    cls = low.expr(p.cls)
    if not isinstance(p.cls, cst.Name):
        cls = low.let(steps, "cls", cls)
    positional = [arg.value for arg in p.patterns]
    keywords = [(kw.key.value, kw.pattern) for kw in p.kwds]
    self_matching = isinstance(p.cls, cst.Name) and _is_builtin_self_type(
        low, p.cls.value
    )
    if not self_matching:
        steps.append(Check(runtime.is_a_type(low.names, cls)))
    steps.append(Check(f"{low.b('isinstance')}({v}, {cls})"))
    attributes: List[str] = []
    dummy: Optional[str] = None
    if positional and self_matching:
        if len(positional) > 1:
            exc = (
                f"{low.b('TypeError')}('{cls}() accepts 1 positional sub-pattern "
                f"({len(positional)} given)')"
            )
            steps.append(Check(runtime.raise_(low.names, exc)))
            return  # it always raises: no sub-pattern is ever tried
        attributes.append(v)
    elif positional:
        dummy = low.let(steps, "missing", f"{low.b('object')}()")
        match_args = low.let(
            steps, "args", runtime.match_args_lookup(low.names, cls, dummy)
        )
        steps.append(
            Check(
                runtime.match_args_usable(
                    low.names, cls, match_args, dummy, len(positional)
                )
            )
        )
        for i in range(len(positional)):
            name = runtime.match_arg_name(low.names, match_args, i)
            if i > 0:
                name = (
                    f"({name} if {match_args}[{i}] not in {match_args}[:{i}] else "
                    f"{runtime.duplicate_attribute(low.names, cls, f'{match_args}[{i}]')})"
                )
            read = f"{low.b('getattr')}({v}, {name}, {dummy})"
            if i == 0:
                # No __match_args__: the class matches its one sub-pattern
                # against the subject itself (checked above).
                read = f"({v} if {match_args} is {dummy} else {read})"
            attributes.append(_read_attribute(low, steps, read, dummy))
    for keyword, _ in keywords:
        if dummy is None:
            dummy = low.let(steps, "missing", f"{low.b('object')}()")
        if positional and not self_matching:
            duplicate = runtime.duplicate_attribute(low.names, cls, repr(keyword))
            steps.append(
                Check(
                    f"({match_args} is {dummy} or {keyword!r} not in {match_args}[:{len(positional)}]"
                    f" or {duplicate})"
                )
            )
        read = f"{low.b('getattr')}({v}, {keyword!r}, {dummy})"
        attributes.append(_read_attribute(low, steps, read, dummy))
    sub_patterns = positional + [pattern for _, pattern in keywords]
    for pattern, attribute in zip(sub_patterns, attributes):
        low.lower(pattern, attribute, steps, caps)


def _read_attribute(low: Lowering, steps: List[Step], read: str, dummy: str) -> str:
    value = low.let(steps, "attr", read)
    # getattr() with a default swallows AttributeError only, as match_class does.
    steps.append(Check(f"{value} is not {dummy}"))
    return value


def _is_builtin_self_type(low: Lowering, name: str) -> bool:
    return name in runtime.MATCH_SELF_TYPES and low.names.builtin(name) == name
