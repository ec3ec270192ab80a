"""Reject the ``match`` statements that CPython 3.10+ rejects, as CPython does.

Contract::

    check_match(node, *, filename, position, source=None, cpython=(3, 12))

``node`` is a :class:`libcst.Match`; ``position(n)`` returns the 1-based
``(lineno, offset)`` of the start of any CST node ``n`` (LibCST's
``PositionProvider`` start, column + 1). If CPython would refuse to compile
the statement, ``check_match`` raises :class:`TranspileError` carrying the
message, line and offset of the *first* error CPython reports; otherwise it
returns None. Match statements nested in case bodies are checked too, in the
order CPython's compiler reaches them, so call it in pre-order (from
``visit_Match``) or use :func:`check_module` for a whole file.

The tool runs on 3.9, so nothing here asks the running interpreter's compiler.
Each rule is one ``check_*`` function mirroring a CPython routine:

* parser stage (``Grammar/python.gram`` and its action helpers, in
  checks/parser_rules.py): a complex literal must be ``real +/- imaginary``,
  ``_`` is no as-target, no unary ``+`` and no t-string in a pattern. LibCST's parser refuses the first two
  itself (its message and position then are LibCST's); LibCST 1.9 accepts
  ``case +1:`` and t-strings, which 3.10-3.13 reject.
* compiler stage (``compiler_pattern_*`` in ``Python/compile.c``, 3.13:
  ``codegen_pattern_*``): irrefutable patterns that are not last, names bound
  twice, alternatives binding different names, two starred names, mapping keys
  that are neither literals nor attribute lookups, duplicate literal keys,
  f-strings, class keywords repeated or named ``__debug__``, ``__debug__`` as a
  capture.

Positions follow CPython: parser errors count columns in characters, compiler
errors in UTF-8 bytes (pass ``source`` to get the byte count; without it the
character count is used, which only differs on lines with non-ASCII text).
``cpython`` picks the release whose positions are reproduced: 3.12+ point an
error about a whole pattern (``alternative patterns bind different names``,
a name bound twice by ``as``/``**rest``/an or-pattern) at that pattern, while
3.10 and 3.11 point it at the last sub-pattern the compiler had visited; 3.10
also compiles a ``try``'s handlers before its ``else`` block. Messages are the
same in 3.10 to 3.13.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.syntax.blocks import parts_holding_matches
from spam_transpile.errors import TranspileError
from spam_transpile.checks.parser_rules import check_parser_rules
from spam_transpile.checks.reporter import PositionFn, Reporter
from spam_transpile.checks.constants import (
    NOT_CONSTANT,
    UNKNOWN_CONSTANT,
    constant_value,
)
from spam_transpile.checks.messages import (
    MSG_ALTERNATIVES,
    MSG_DEBUG,
    MSG_DUPLICATE_KEY,
    MSG_DUPLICATE_NAME,
    MSG_KEY_KIND,
    MSG_NAME_CAPTURE,
    MSG_REPEATED_ATTR,
    MSG_STARS,
    MSG_VALUE_KIND,
    MSG_WILDCARD,
)

# The CPython release whose positions are reproduced by default (3.12 and 3.13
# agree on every case tested).
DEFAULT_CPYTHON: Tuple[int, int] = (3, 12)


def check_match(
    node: cst.Match,
    *,
    filename: str,
    position: PositionFn,
    source: Optional[str] = None,
    cpython: Tuple[int, int] = DEFAULT_CPYTHON,
) -> None:
    """Raise TranspileError for the first error CPython reports in ``node``.

    Parser errors anywhere in the statement win over compiler errors, as
    CPython parses a whole file before compiling any of it.
    """
    reporter = Reporter(filename, position, source)
    check_parser_rules(node, reporter)
    _MatchCompiler(reporter, cpython).statement(node)


def check_module(
    module: cst.Module,
    *,
    filename: str,
    position: PositionFn,
    source: Optional[str] = None,
    cpython: Tuple[int, int] = DEFAULT_CPYTHON,
) -> None:
    """Check every match statement of ``module`` in CPython's order.

    CPython reports the first parser error of the file (in text order) before
    any compiler error, and compiler errors in the order its compiler walks
    the file; calling :func:`check_match` per statement gets the first right
    only within one statement.
    """
    reporter = Reporter(filename, position, source)
    check_parser_rules(module, reporter)
    compiler = _MatchCompiler(reporter, cpython)
    for match in compiler.nested_matches(module):
        compiler.statement(match)


def parser_stage_error(
    node: cst.Match,
    *,
    filename: str,
    position: PositionFn,
    source: Optional[str] = None,
) -> Optional[TranspileError]:
    """The first parser-stage error in ``node`` (text order), or None.

    With :func:`compiler_stage_error`, lets a caller that meets match
    statements one by one in text order report what CPython reports first for
    the whole file: its first parser error, else its first compiler error.
    """
    try:
        check_parser_rules(node, Reporter(filename, position, source))
    except TranspileError as error:
        return error
    return None


def compiler_stage_error(
    node: cst.Match,
    *,
    filename: str,
    position: PositionFn,
    source: Optional[str] = None,
    cpython: Tuple[int, int] = DEFAULT_CPYTHON,
) -> Optional[TranspileError]:
    """The first compiler-stage error in ``node`` and its nested statements."""
    try:
        _MatchCompiler(Reporter(filename, position, source), cpython).statement(node)
    except TranspileError as error:
        return error
    return None


# --------------------------------------------------------------------------
# Compiler stage: compiler_match / compiler_pattern_* in Python/compile.c.


@dataclass
class _PatternContext:
    """CPython's pattern_context, minus the bytecode bookkeeping."""

    stores: List[str] = field(default_factory=list)
    allow_irrefutable: bool = False


class _MatchCompiler:
    """Walks patterns in the order CPython's compiler does and checks them.

    ``last`` is the last pattern the compiler positioned itself at
    (SET_LOC): 3.10 and 3.11 report some errors there rather than at the
    pattern at fault.
    """

    def __init__(self, reporter: Reporter, cpython: Tuple[int, int]) -> None:
        self.reporter = reporter
        self.stale_locations = cpython < (3, 12)
        self.handlers_before_else = cpython < (3, 11)
        self.skips_mapping_wildcards = cpython < (3, 11)
        self.last: Optional[cst.CSTNode] = None

    # -- statements ---------------------------------------------------------

    def statement(self, node: cst.Match) -> None:
        """compiler_match_inner: each case's pattern, then guard and body."""
        cases = node.cases
        for i, case in enumerate(cases):
            # "Irrefutable cases must be either guarded, last, or both."
            pc = _PatternContext(
                allow_irrefutable=case.guard is not None or i == len(cases) - 1
            )
            self.pattern(case.pattern, pc)
            # The body is compiled before the next case's pattern, nested
            # match statements included.
            for nested in self.nested_matches(case.body):
                self.statement(nested)

    def nested_matches(self, node: cst.CSTNode) -> Iterator[cst.Match]:
        """Match statements under ``node`` (not inside each other), in
        compilation order: text order, except that compiler_try_except
        compiles a ``try``'s ``else`` before its handlers (3.11+)."""
        for child in self._children_in_compile_order(node):
            if isinstance(child, cst.Match):
                yield child
            else:
                yield from self.nested_matches(child)

    def _children_in_compile_order(self, node: cst.CSTNode) -> Sequence[cst.CSTNode]:
        if type(node) is cst.Try and not self.handlers_before_else:
            parts: List[Optional[cst.CSTNode]] = [node.body, node.orelse]
            parts.extend(node.handlers)
            parts.append(node.finalbody)
            return [part for part in parts if part is not None]
        return parts_holding_matches(node)

    # -- patterns -----------------------------------------------------------

    def pattern(
        self, p: Union[cst.MatchPattern, cst.MatchStar], pc: _PatternContext
    ) -> None:
        """compiler_pattern: SET_LOC(c, p), then dispatch on the kind."""
        self.last = p
        kind = type(p)  # exact types: isinstance() on LibCST's ABCs is slow
        if kind is cst.MatchAs:
            self.pattern_as(p, pc)  # type: ignore[arg-type]
        elif kind is cst.MatchOr:
            self.pattern_or(p, pc)  # type: ignore[arg-type]
        elif kind is cst.MatchList or kind is cst.MatchTuple:
            self.pattern_sequence(p, pc)  # type: ignore[arg-type]
        elif kind is cst.MatchMapping:
            self.pattern_mapping(p, pc)  # type: ignore[arg-type]
        elif kind is cst.MatchClass:
            self.pattern_class(p, pc)  # type: ignore[arg-type]
        elif kind is cst.MatchValue:
            check_value_pattern(p, self.reporter)  # type: ignore[arg-type]
        elif kind is cst.MatchStar:
            self.store_name(p.name, p, pc)  # type: ignore[union-attr]
        # MatchSingleton: nothing can be wrong with None/True/False.

    def subpattern(
        self, p: Union[cst.MatchPattern, cst.MatchStar], pc: _PatternContext
    ) -> None:
        """compiler_pattern_subpattern: anything goes inside a container."""
        allow_irrefutable = pc.allow_irrefutable
        pc.allow_irrefutable = True
        self.pattern(p, pc)
        pc.allow_irrefutable = allow_irrefutable

    def pattern_as(self, p: cst.MatchAs, pc: _PatternContext) -> None:
        """compiler_pattern_as: the sub-pattern keeps the caller's allowance."""
        if p.pattern is None:
            check_irrefutable_allowed(p, pc, self.reporter)
            self.store_name(p.name, p, pc)
            return
        self.pattern(p.pattern, pc)
        self.store_name(p.name, p, pc)

    def pattern_or(self, p: cst.MatchOr, pc: _PatternContext) -> None:
        """compiler_pattern_or: each alternative binds into a fresh list."""
        alternatives = [element.pattern for element in p.patterns]
        control: Optional[List[str]] = None
        for i, alt in enumerate(alternatives):
            self.last = alt
            alt_pc = _PatternContext(
                # "An irrefutable sub-pattern must be last, if it is allowed
                # at all."
                allow_irrefutable=i == len(alternatives) - 1
                and pc.allow_irrefutable,
            )
            self.pattern(alt, alt_pc)
            if control is None:
                control = alt_pc.stores
            else:
                check_alternatives_bind_same_names(
                    control, alt_pc.stores, self.error_site(p), self.reporter
                )
        for name in control or []:
            check_name_not_bound(name, pc, self.error_site(p), self.reporter)
            pc.stores.append(name)

    def pattern_sequence(
        self, p: Union[cst.MatchList, cst.MatchTuple], pc: _PatternContext
    ) -> None:
        """compiler_pattern_sequence and the two helpers it picks from."""
        check_single_star(p, self.reporter)
        for element in _sequence_subpatterns_compiled(p):
            self.subpattern(element, pc)

    def pattern_mapping(self, p: cst.MatchMapping, pc: _PatternContext) -> None:
        """compiler_pattern_mapping: all keys, then values, then ``**rest``."""
        check_mapping_keys(p, self.reporter)
        for element in p.elements:
            # 3.10 skips wildcard values; 3.11+ compiles them all.
            if not (self.skips_mapping_wildcards and _is_wildcard(element.pattern)):
                self.subpattern(element.pattern, pc)
        if p.rest is not None:
            self.store_name(p.rest, p, pc)

    def pattern_class(self, p: cst.MatchClass, pc: _PatternContext) -> None:
        """compiler_pattern_class: keywords validated before any sub-pattern;
        wildcard sub-patterns are not compiled at all."""
        if p.kwds:
            check_class_keywords(p, self.reporter)
            self.last = p  # SET_LOC(c, p) after validate_kwd_attrs
        subpatterns = [element.value for element in p.patterns]
        subpatterns += [keyword.pattern for keyword in p.kwds]
        for sub in subpatterns:
            if not _is_wildcard(sub):
                self.subpattern(sub, pc)

    # -- names --------------------------------------------------------------

    def store_name(
        self, name: Optional[cst.Name], owner: cst.CSTNode, pc: _PatternContext
    ) -> None:
        """pattern_helper_store_name: forbidden_name(), then the duplicate check.

        3.12+ report at the pattern doing the binding; before, at wherever
        the compiler last stood (the same for a capture or a star).
        """
        if name is None:
            return
        identifier = _identifier(name)
        site = self.error_site(owner)
        check_not_debug(identifier, site, self.reporter)
        check_name_not_bound(identifier, pc, site, self.reporter)
        pc.stores.append(identifier)

    def error_site(self, pattern: cst.CSTNode) -> cst.CSTNode:
        if self.stale_locations and self.last is not None:
            return self.last
        return pattern


# -- one function per compiler rule --------------------------------------------


def check_irrefutable_allowed(
    p: cst.MatchAs, pc: _PatternContext, reporter: Reporter
) -> None:
    """compiler_pattern_as: a capture or ``_`` that is neither last, guarded,
    nor inside a container makes the following cases/alternatives dead."""
    if pc.allow_irrefutable:
        return
    if p.name is not None:
        raise reporter.compiler_error(MSG_NAME_CAPTURE.format(_identifier(p.name)), p)
    raise reporter.compiler_error(MSG_WILDCARD, p)


def check_not_debug(name: str, site: cst.CSTNode, reporter: Reporter) -> None:
    """forbidden_name(): ``__debug__`` is never a store target."""
    if name == "__debug__":
        raise reporter.compiler_error(MSG_DEBUG, site)


def check_name_not_bound(
    name: str, pc: _PatternContext, site: cst.CSTNode, reporter: Reporter
) -> None:
    """compiler_error_duplicate_store: one name, one binding per pattern.

    CPython compares the unmangled names (``__a`` and ``_K__a`` do not
    clash in class K, though they bind the same variable).
    """
    if name in pc.stores:
        raise reporter.compiler_error(MSG_DUPLICATE_NAME.format(name), site)


def check_alternatives_bind_same_names(
    control: List[str], stores: List[str], site: cst.CSTNode, reporter: Reporter
) -> None:
    """compiler_pattern_or: every alternative binds the first one's names.

    Checked after each alternative is compiled, so errors inside it win.
    """
    if len(stores) != len(control) or any(name not in stores for name in control):
        raise reporter.compiler_error(MSG_ALTERNATIVES, site)


def check_single_star(
    p: Union[cst.MatchList, cst.MatchTuple], reporter: Reporter
) -> None:
    """compiler_pattern_sequence: at most one ``*name`` or ``*_``."""
    stars = [element for element in p.patterns if isinstance(element, cst.MatchStar)]
    if len(stars) > 1:
        raise reporter.compiler_error(MSG_STARS, p)


def check_mapping_keys(p: cst.MatchMapping, reporter: Reporter) -> None:
    """compiler_pattern_mapping: keys are folded Constants (no duplicates,
    compared with ``==`` as a set does: 0 == False == 0.0 == 0j) or
    attribute lookups; errors point at the mapping pattern."""
    seen = set()
    for element in p.elements:
        key = element.key
        if isinstance(key, cst.Attribute):
            continue
        value = constant_value(key)
        if value is NOT_CONSTANT:
            raise reporter.compiler_error(MSG_KEY_KIND, p)
        if value is UNKNOWN_CONSTANT:
            continue
        try:
            duplicate = value in seen
            seen.add(value)
        except TypeError:  # unhashable: cannot come from source text
            continue
        if duplicate:
            raise reporter.compiler_error(MSG_DUPLICATE_KEY.format(value), p)


def check_value_pattern(p: cst.MatchValue, reporter: Reporter) -> None:
    """compiler_pattern_value: MATCH_VALUE_EXPR, a Constant or an Attribute
    (an f-string is a JoinedStr, even without replacement fields)."""
    if isinstance(p.value, cst.Attribute):
        return
    if constant_value(p.value) is NOT_CONSTANT:
        raise reporter.compiler_error(MSG_VALUE_KIND, p)


def check_class_keywords(p: cst.MatchClass, reporter: Reporter) -> None:
    """validate_kwd_attrs: each keyword in turn is checked for ``__debug__``
    and then for a later repeat; errors point at the keyword's pattern."""
    names = [_identifier(keyword.key) for keyword in p.kwds]
    for i, name in enumerate(names):
        check_not_debug(name, p.kwds[i].pattern, reporter)
        for j in range(i + 1, len(names)):
            if names[j] == name:
                raise reporter.compiler_error(
                    MSG_REPEATED_ATTR.format(name), p.kwds[j].pattern
                )


# -- helpers -------------------------------------------------------------------


def _identifier(name: cst.Name) -> str:
    """The identifier CPython's parser makes of a NAME: NFKC-normalised
    (``ﬁ`` and ``fi`` are one name)."""
    if name.value.isascii():
        return name.value
    return unicodedata.normalize("NFKC", name.value)


def _is_wildcard(p: cst.MatchPattern) -> bool:
    """WILDCARD_CHECK: a bare ``_``."""
    return isinstance(p, cst.MatchAs) and p.pattern is None and p.name is None


def _sequence_subpatterns_compiled(
    p: Union[cst.MatchList, cst.MatchTuple],
) -> List[Union[cst.MatchPattern, cst.MatchStar]]:
    """The sub-patterns compiler_pattern_sequence compiles, in order.

    Only wildcards: none. A ``*_``: pattern_helper_sequence_subscr skips the
    star and every ``_``. Otherwise pattern_helper_sequence_unpack compiles
    them all. Skipped ones cannot hold an error, but they move ``last``.
    """
    elements: List[Union[cst.MatchPattern, cst.MatchStar]] = [
        element if isinstance(element, cst.MatchStar) else element.value
        for element in p.patterns
    ]
    stars = [e for e in elements if isinstance(e, cst.MatchStar)]
    star_wildcard = bool(stars) and stars[0].name is None
    only_wildcard = all(
        e.name is None if isinstance(e, cst.MatchStar) else _is_wildcard(e)
        for e in elements
    )
    if only_wildcard:
        return []
    if star_wildcard:
        return [
            e
            for e in elements
            if not isinstance(e, cst.MatchStar) and not _is_wildcard(e)
        ]
    return elements
