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

* parser stage (``Grammar/python.gram`` and its action helpers): a complex
  literal must be ``real +/- imaginary``, ``_`` is no as-target, no unary
  ``+`` and no t-string in a pattern. LibCST's parser refuses the first two
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

import ast
import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.syntax.blocks import parts_holding_matches
from spam_transpile.errors import TranspileError
from spam_transpile.syntax.cstwalk import PATTERN_TYPES, pattern_nodes

PositionFn = Callable[[cst.CSTNode], Tuple[int, int]]
# The CPython release whose positions are reproduced by default (3.12 and 3.13
# agree on every case tested).
DEFAULT_CPYTHON: Tuple[int, int] = (3, 12)

MSG_NAME_CAPTURE = "name capture {!r} makes remaining patterns unreachable"
MSG_WILDCARD = "wildcard makes remaining patterns unreachable"
MSG_ALTERNATIVES = "alternative patterns bind different names"
MSG_DUPLICATE_NAME = "multiple assignments to name {!r} in pattern"
MSG_DEBUG = "cannot assign to __debug__"
MSG_STARS = "multiple starred names in sequence pattern"
MSG_KEY_KIND = "mapping pattern keys may only match literals and attribute lookups"
MSG_DUPLICATE_KEY = "mapping pattern checks duplicate key ({!r})"
MSG_VALUE_KIND = "patterns may only match literals and attribute lookups"
MSG_REPEATED_ATTR = "attribute name repeated in class pattern: {}"
MSG_REAL = "real number required in complex literal"
MSG_IMAGINARY = "imaginary number required in complex literal"
MSG_UNDERSCORE_TARGET = "cannot use '_' as a target"
MSG_INVALID_SYNTAX = "invalid syntax"

# Every message of the rules above, as a pattern: CPython's compile() on
# the tool's interpreter may report one of these first, but where it points
# depends on the CPython release, so the rules here report them instead.
_PATTERN_RULE_MESSAGES = re.compile(
    "|".join(
        re.escape(message)
        .replace(re.escape("{!r}"), ".*")
        .replace(re.escape("{}"), ".*")
        for message in (
            MSG_NAME_CAPTURE,
            MSG_WILDCARD,
            MSG_ALTERNATIVES,
            MSG_DUPLICATE_NAME,
            MSG_DEBUG,
            MSG_STARS,
            MSG_KEY_KIND,
            MSG_DUPLICATE_KEY,
            MSG_VALUE_KIND,
            MSG_REPEATED_ATTR,
        )
    )
)


def is_pattern_rule_message(msg: str) -> bool:
    """Is ``msg`` one of the compiler-stage errors the pattern rules report?"""
    return _PATTERN_RULE_MESSAGES.fullmatch(msg) is not None


_Number = (cst.Integer, cst.Float, cst.Imaginary)
_TemplatedString = getattr(cst, "TemplatedString", None)  # newer LibCSTs only
# What constant_value() returns for a literal that CPython's AST optimizer
# does not fold into a Constant (an f-string stays a JoinedStr), and for a
# Constant whose value this interpreter cannot compute (a decimal literal past
# the int digit limit, which CPython refuses for its own reasons).
_NOT_CONSTANT = object()
_UNKNOWN_CONSTANT = object()


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
    reporter = _Reporter(filename, position, source)
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
    reporter = _Reporter(filename, position, source)
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
        check_parser_rules(node, _Reporter(filename, position, source))
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
        _MatchCompiler(_Reporter(filename, position, source), cpython).statement(node)
    except TranspileError as error:
        return error
    return None


# --------------------------------------------------------------------------
# Positions and errors


def _source_lines(source: str) -> List[str]:
    # CPython (and LibCST) end lines at \r\n, \r or \n only; str.splitlines
    # would also split at \f, \v, \x1c... and shift every later line number.
    return re.split(r"\r\n|\r|\n", source)


_cached_source_lines = functools.lru_cache(maxsize=4)(_source_lines)


@dataclass
class _Reporter:
    filename: str
    position: PositionFn
    source: Optional[str]

    def start(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Where CPython's AST node for ``node`` starts: (line, 1-based column).

        LibCST leaves a node's own parentheses out of its position, except
        for the literal of a MatchValue/MatchSingleton (the parentheses belong
        to the value, which the pattern's range covers); CPython's group
        pattern ``(p)`` has p's position, but a parenthesised sequence
        pattern starts at its innermost ``(``.
        """
        if isinstance(node, (cst.MatchValue, cst.MatchSingleton)):
            return self.position(node.value)
        if isinstance(node, cst.MatchTuple) and node.lpar:
            return self.position(node.lpar[-1])
        return self.position(node)

    def parser_error(self, msg: str, node: cst.CSTNode) -> TranspileError:
        """An error of CPython's parser: its offset counts characters."""
        lineno, offset = self.start(node)
        return TranspileError(msg, filename=self.filename, lineno=lineno, offset=offset)

    def compiler_error(self, msg: str, node: cst.CSTNode) -> TranspileError:
        """An error of CPython's compiler: its offset counts UTF-8 bytes.

        compiler_error() passes the AST's col_offset (bytes) + 1 unconverted,
        unlike the parser, which converts to characters.
        """
        lineno, offset = self.start(node)
        if self.source is not None:
            lines = _cached_source_lines(self.source)
            if 0 < lineno <= len(lines):
                prefix = lines[lineno - 1][: offset - 1]
                offset = len(prefix.encode("utf-8", "surrogatepass")) + 1
        return TranspileError(msg, filename=self.filename, lineno=lineno, offset=offset)


# --------------------------------------------------------------------------
# Parser stage: rules of CPython's grammar that LibCST's grammar may not have.


def check_parser_rules(root: cst.CSTNode, reporter: _Reporter) -> None:
    """Apply the grammar's pattern rules to every pattern under ``root``.

    The PEG parser stops at the first error in the text, so patterns are
    visited in text order (LibCST lists children in source order).
    """
    for node in _walk_text_order(root):
        kind = type(node)  # exact types: isinstance() on LibCST's ABCs is slow
        if kind is cst.MatchValue:
            check_literal_syntax(node.value, reporter)  # type: ignore[attr-defined]
        elif kind is cst.MatchMappingElement:
            check_literal_syntax(node.key, reporter)  # type: ignore[attr-defined]
        elif kind is cst.MatchAs:
            check_as_target(node, reporter)  # type: ignore[arg-type]


def _walk_text_order(
    node: cst.CSTNode, in_pattern: bool = False
) -> Iterator[cst.CSTNode]:
    """``node`` and its descendants that can hold a pattern, in text order.

    Only blocks of compound statements and patterns are entered (no pattern
    can hide in an expression or a simple statement); inside a pattern only
    pattern nodes and mapping elements are visited. Both by direct recursion
    over their fields, which is much cheaper than LibCST's generic
    ``children``.
    """
    if type(node) in PATTERN_TYPES:
        yield from pattern_nodes(node)  # type: ignore[arg-type]
        return
    yield node
    for child in parts_holding_matches(node):
        yield from _walk_text_order(child)


def check_literal_syntax(expr: cst.BaseExpression, reporter: _Reporter) -> None:
    """A literal pattern or mapping key: ``literal_pattern`` / ``literal_expr``.

    Unary ``+`` is not in the grammar (``signed_number`` only knows ``-``),
    nor is a t-string (3.10-3.13 tokenize ``t"x"`` as NAME STRING): both are a
    plain "invalid syntax" at the offending token.
    """
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Plus:
        raise reporter.parser_error(MSG_INVALID_SYNTAX, expr)
    check_complex_literal(expr, reporter)
    check_no_template_string(expr, reporter)


def check_complex_literal(expr: cst.BaseExpression, reporter: _Reporter) -> None:
    """``complex_number``: ``signed_real_number ('+'|'-') imaginary_number``.

    _PyPegen_ensure_real / _PyPegen_ensure_imaginary raise at the offending
    NUMBER token, the real part first.
    """
    if not isinstance(expr, cst.BinaryOperation):
        return
    if not isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return
    real = expr.left
    if isinstance(real, cst.UnaryOperation) and isinstance(real.operator, cst.Plus):
        raise reporter.parser_error(MSG_INVALID_SYNTAX, real)
    if isinstance(real, cst.UnaryOperation) and isinstance(real.operator, cst.Minus):
        real = real.expression
    if isinstance(real, cst.Imaginary):
        raise reporter.parser_error(MSG_REAL, real)
    if isinstance(expr.right, _Number) and not isinstance(expr.right, cst.Imaginary):
        raise reporter.parser_error(MSG_IMAGINARY, expr.right)


def check_no_template_string(expr: cst.BaseExpression, reporter: _Reporter) -> None:
    """A t-string (LibCST 1.9 parses them) is NAME STRING to 3.10-3.13."""
    if _TemplatedString is None:
        return
    for part in _string_parts(expr):
        if isinstance(part, _TemplatedString):
            lineno, offset = reporter.start(part)
            prefix = len(part.start.rstrip("'\""))
            raise TranspileError(
                MSG_INVALID_SYNTAX,
                filename=reporter.filename,
                lineno=lineno,
                offset=offset + prefix,
            )


def check_as_target(node: cst.MatchAs, reporter: _Reporter) -> None:
    """``invalid_as_pattern``: ``or_pattern 'as' "_"``.

    A bare ``_`` is a wildcard (LibCST: no name); only ``p as _`` is an error.
    """
    if node.pattern is not None and node.name is not None and node.name.value == "_":
        raise reporter.parser_error(MSG_UNDERSCORE_TARGET, node.name)


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

    def __init__(self, reporter: _Reporter, cpython: Tuple[int, int]) -> None:
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
    p: cst.MatchAs, pc: _PatternContext, reporter: _Reporter
) -> None:
    """compiler_pattern_as: a capture or ``_`` that is neither last, guarded,
    nor inside a container makes the following cases/alternatives dead."""
    if pc.allow_irrefutable:
        return
    if p.name is not None:
        raise reporter.compiler_error(MSG_NAME_CAPTURE.format(_identifier(p.name)), p)
    raise reporter.compiler_error(MSG_WILDCARD, p)


def check_not_debug(name: str, site: cst.CSTNode, reporter: _Reporter) -> None:
    """forbidden_name(): ``__debug__`` is never a store target."""
    if name == "__debug__":
        raise reporter.compiler_error(MSG_DEBUG, site)


def check_name_not_bound(
    name: str, pc: _PatternContext, site: cst.CSTNode, reporter: _Reporter
) -> None:
    """compiler_error_duplicate_store: one name, one binding per pattern.

    CPython compares the unmangled names (``__a`` and ``_K__a`` do not
    clash in class K, though they bind the same variable).
    """
    if name in pc.stores:
        raise reporter.compiler_error(MSG_DUPLICATE_NAME.format(name), site)


def check_alternatives_bind_same_names(
    control: List[str], stores: List[str], site: cst.CSTNode, reporter: _Reporter
) -> None:
    """compiler_pattern_or: every alternative binds the first one's names.

    Checked after each alternative is compiled, so errors inside it win.
    """
    if len(stores) != len(control) or any(name not in stores for name in control):
        raise reporter.compiler_error(MSG_ALTERNATIVES, site)


def check_single_star(
    p: Union[cst.MatchList, cst.MatchTuple], reporter: _Reporter
) -> None:
    """compiler_pattern_sequence: at most one ``*name`` or ``*_``."""
    stars = [element for element in p.patterns if isinstance(element, cst.MatchStar)]
    if len(stars) > 1:
        raise reporter.compiler_error(MSG_STARS, p)


def check_mapping_keys(p: cst.MatchMapping, reporter: _Reporter) -> None:
    """compiler_pattern_mapping: keys are folded Constants (no duplicates,
    compared with ``==`` as a set does: 0 == False == 0.0 == 0j) or
    attribute lookups; errors point at the mapping pattern."""
    seen = set()
    for element in p.elements:
        key = element.key
        if isinstance(key, cst.Attribute):
            continue
        value = constant_value(key)
        if value is _NOT_CONSTANT:
            raise reporter.compiler_error(MSG_KEY_KIND, p)
        if value is _UNKNOWN_CONSTANT:
            continue
        try:
            duplicate = value in seen
            seen.add(value)
        except TypeError:  # unhashable: cannot come from source text
            continue
        if duplicate:
            raise reporter.compiler_error(MSG_DUPLICATE_KEY.format(value), p)


def check_value_pattern(p: cst.MatchValue, reporter: _Reporter) -> None:
    """compiler_pattern_value: MATCH_VALUE_EXPR, a Constant or an Attribute
    (an f-string is a JoinedStr, even without replacement fields)."""
    if isinstance(p.value, cst.Attribute):
        return
    if constant_value(p.value) is _NOT_CONSTANT:
        raise reporter.compiler_error(MSG_VALUE_KIND, p)


def check_class_keywords(p: cst.MatchClass, reporter: _Reporter) -> None:
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


def _string_parts(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    if type(expr) is cst.ConcatenatedString:
        return _string_parts(expr.left) + _string_parts(expr.right)
    return [expr]


def constant_value(expr: cst.BaseExpression) -> object:
    """The Constant CPython's AST optimizer folds a literal into, or
    _NOT_CONSTANT (f-strings stay JoinedStr)."""
    if type(expr) is cst.Name and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if isinstance(expr, _Number):
        return _evaluate_number(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        operand = constant_value(expr.expression)
        if operand is _NOT_CONSTANT or operand is _UNKNOWN_CONSTANT:
            return operand
        return -operand  # type: ignore[operator]
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract)
    ):
        left, right = constant_value(expr.left), constant_value(expr.right)
        for part in (left, right):
            if part is _NOT_CONSTANT or part is _UNKNOWN_CONSTANT:
                return part
        if isinstance(expr.operator, cst.Add):
            return left + right  # type: ignore[operator]
        return left - right  # type: ignore[operator]
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        return _string_value(expr)
    return _NOT_CONSTANT


@functools.lru_cache(maxsize=1024)
def _evaluate_number(text: str) -> object:
    try:
        return _literal(text)
    except (ValueError, SyntaxError):  # > 4300 digits (3.11+, 3.10.7+)
        return _UNKNOWN_CONSTANT


# A literal's value, once per text: switches repeat their literals across
# matches, and each evaluation parses the text.
_literal = functools.lru_cache(maxsize=4096)(ast.literal_eval)


def _string_value(expr: cst.BaseExpression) -> object:
    parts = _string_parts(expr)
    if not all(isinstance(part, cst.SimpleString) for part in parts):
        return _NOT_CONSTANT
    values = [
        _literal(part.value) for part in parts if isinstance(part, cst.SimpleString)
    ]
    try:
        return values[0][:0].join(values)  # type: ignore[arg-type]
    except TypeError:  # bytes + str: LibCST refuses to build this
        return _NOT_CONSTANT
