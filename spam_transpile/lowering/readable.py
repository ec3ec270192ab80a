"""The readable layout: what ``--in-place`` and the pre-commit hook write.

The same lowered cases as the keep-lines layout, written as a person writes
Python 3.9: real statements, lines free to move.

- A subject that is not already a local name gets a variable of its own
  (``subject = command.split()``), as a person names it.
- Each case is an ``if``/``elif`` on its condition; without a guard, its
  captures are plain assignments at the top of its body (``x = shape.x``,
  ``first, *rest = shape``, a few short ones as one ``x, y = ..., ...``);
  with a guard they are stored inside the test, before the guard, since a
  failed guard leaves them bound.
- A last ``case _:`` becomes ``else:``, so an exhaustive match stays
  exhaustive for type checkers.
- Sequence and mapping checks read ``isinstance(v, _spam.Sequence)``: the
  helper's classes decide as CPython's ``match`` does (not as the ABCs do),
  and a type checker narrows the subject for the reads that follow.
- Cases that dispatch on a sequence's length share it, as a person
  dispatching on ``line.split()`` does: ``size = len(subject) if
  isinstance(subject, _spam.Sequence) else -1`` once, then ``size == 2 and
  subject[0] == "go"`` (see :class:`SharedLength`).
- The module's helper is a block after its imports, its source a plain
  string.

Black then formats exactly the lines that changed (its line-ranges feature),
and the result must have the same syntax tree as before formatting.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import libcst as cst

from spam_transpile.errors import NotInstalled
from spam_transpile.lowering import emit
from spam_transpile.lowering.ir import (
    TRUE,
    All,
    AnyOf,
    Choice,
    Cond,
    LoweredPattern,
    Test,
    Value,
    all_of,
    is_kind_test,
    is_length_test,
    is_true,
    opens_with_sequence_check,
    opens_with_sequence_length,
    starts_with_length,
    tests_in,
)
from spam_transpile.lowering.helper_lines import is_docstring as _is_docstring
from spam_transpile.lowering.paths import Subject
from spam_transpile.lowering.positions import header_comments
from spam_transpile.syntax.cstwalk import descendants
from spam_transpile.lowering.runtime import HELPER_NAME, helper_key, helper_source
from spam_transpile.lowering.read_once import read_calls_once
from spam_transpile.lowering.guards import segments
from spam_transpile.lowering.scopes import bound_besides
from spam_transpile.lowering.subjects import local_subject
from spam_transpile.lowering.subject_facts import SharedKeys

if TYPE_CHECKING:  # pragma: no cover
    from spam_transpile.lowering.transformer import MatchLowering

LINE_LENGTH = 88
# A case's captures share one assignment up to this width (``x, y =
# shape.get("x"), shape.get("y")``), which fits on one line up to six
# levels of indentation deep.
TOGETHER = LINE_LENGTH - 6 * 4

Body = Union[cst.IndentedBlock, cst.SimpleStatementSuite]


class Raw(cst.Name):
    """Generated expression or statement text, printed as it is."""

    def _validate(self) -> None:
        pass


def _statement(text: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(Raw(text))])


class ReadableMatch:
    """Builds the statements that replace one match statement."""

    def __init__(
        self, owner: "MatchLowering", original: cst.Match, node: cst.Match
    ) -> None:
        self.owner = owner
        self.original = original
        self.node = node
        self.scope_kind = owner.scopes[-1].kind
        self.subject, self.subject_var, self.info = self._subject()
        #: the helper's field reads named so far (``_fields_once``)
        self._fields: Dict[str, str] = {}

    def _subject(self) -> Tuple[str, Optional[str], Subject]:
        node = self.node.subject
        local = local_subject(self.owner, self.owner.scopes[-1], self.original, node)
        if local is not None:
            return local.text, None, local
        var = self.owner.names.readable("subject")
        info = Subject(var)
        if isinstance(node, cst.Tuple) and not any(
            isinstance(e, cst.StarredElement) for e in node.elements
        ):
            info = Subject(var, "sequence", len(node.elements))
            info.elements = [f"{var}[{i}]" for i in range(len(node.elements))]
        return var, var, info

    def statements(self) -> List[cst.BaseStatement]:
        uses_before = self.owner.lowering.uses
        out = self._statements()
        self._helper_global_in_class(out, uses_before)
        return out

    def _helper_global_in_class(
        self, out: List[cst.BaseStatement], uses_before: int
    ) -> None:
        """A class made inside a function reads the helper with ``LOAD_NAME``,
        which cloudpickle does not count among the globals of the function it
        copies by value: declared ``global``, it is read as a function reads
        it."""
        scope = self.owner.scopes[-1]
        lowering = self.owner.lowering
        if (
            self.scope_kind != "class"
            or scope.helper_global
            or lowering.uses == uses_before
            or not any(s.kind == "function" for s in self.owner.scopes[:-1])
        ):
            return
        scope.helper_global = True
        first = out[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.If))
        out[0] = _statement(f"global {lowering.helper_name}").with_changes(
            leading_lines=first.leading_lines
        )
        out.insert(1, first.with_changes(leading_lines=[]))

    def _statements(self) -> List[cst.BaseStatement]:
        out: List[cst.BaseStatement] = []
        if self.subject_var is not None:
            out.append(self._assign_subject())
        cases = list(self.node.cases)
        lowered = [
            self.owner.lowering.lower_case(case.pattern, self.info) for case in cases
        ]
        # What is computed before the first case holds until a guard may
        # run code; the cases after it measure the subject again.
        runs = segments(
            [case.guard for case in cases],
            [case.pattern for case in cases],
            self.scope_kind == "function",
            self.owner.names.builtin,
        )
        limit = runs[0][1]
        shared, unshared = lowered[:limit], lowered[limit:]
        length = self._shared_length(shared)
        if length is not None:
            out.append(_statement(length.statement))
            shared = [length.apply(pattern) for pattern in shared]
        keys = self._shared_keys(shared) if length is None else None
        if keys is not None and keys.check is not None:
            check = keys.check.readable or keys.check.expr
            for statement in keys.assignments(check, in_lookup_order=True):
                out.append(_statement(statement))
            # As for the shared length, a type checker needs the mapping
            # check to narrow a local name of a declared type.
            drop = not (self.subject_var is None and self._annotated_function())
            shared = [keys.rewrite(pattern, drop) for pattern in shared]
        lowered = self._later_lengths(shared + unshared, runs[1:], length)
        lowered = [self._fields_once(pattern) for pattern in lowered]
        added = [self.subject_var] if self.subject_var is not None else []
        added += [length.name] if length is not None else []
        added += list(keys.keys.values()) if keys is not None else []
        # Module and class bodies: these are no attributes of theirs. Each
        # body deletes them first thing (after its captures are read), so a
        # ``break``, a ``continue`` or an exception in the body leaves none
        # behind; and so does an ``else`` when no case matched.
        self._doomed = added if self.scope_kind != "function" else []
        chain: Optional[Union[cst.If, cst.Else]] = None
        if self._doomed and not self._always_matches(cases[-1], lowered[-1]):
            chain = cst.Else(body=cst.IndentedBlock(body=[self._delete()]))
        for index in reversed(range(len(cases))):
            chain = self._case(cases[index], lowered[index], index, chain)
        if isinstance(chain, cst.Else):  # a lone ``case _:``
            chain = cst.If(test=Raw("True"), body=chain.body)
        assert chain is not None
        out.append(chain.with_changes(leading_lines=self._lines_before_chain()))
        declared = self._declarations(cases, lowered)
        out[:0] = [_statement(f"{name}: object") for name in declared]
        if self._doomed and self.scope_kind == "class":
            # A class body's namespace sees every store: they live in the
            # enclosing function or the module (see class_temps).
            holder = self.owner.class_temps_holder(self._doomed)
            out.insert(0, _statement(f"{holder} {', '.join(self._doomed)}"))
        first = out[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.If))
        out[0] = first.with_changes(
            leading_lines=[*self.node.leading_lines, *first.leading_lines]
        )
        return out

    def _lines_before_chain(self) -> List[cst.EmptyLine]:
        """What stood between ``match`` and the first ``case`` (comments,
        blank lines), and the match line's own comment where no subject
        assignment took it."""
        lines = self._lines_before(0)
        comment = self.node.whitespace_after_colon.comment
        if comment is not None and self.subject_var is None:
            lines.insert(0, cst.EmptyLine(comment=comment))
        return lines

    def _lines_before(self, index: int) -> List[cst.EmptyLine]:
        """The lines before a case, then the comments its pattern held: the
        test that replaces the pattern has no place for them."""
        case = self.node.cases[index]
        lines = list(case.leading_lines)
        if any(type(node) is cst.Comment for node in descendants(case.pattern)):
            original = self.original.cases[index]
            lines += [
                cst.EmptyLine(comment=cst.Comment(text))
                for _, text in header_comments(self.owner.position, original)
            ]
        return lines

    @staticmethod
    def _always_matches(case: cst.MatchCase, pattern: LoweredPattern) -> bool:
        return case.guard is None and is_true(pattern.cond)

    def _delete(self) -> cst.SimpleStatementLine:
        return _statement(f"del {', '.join(self._doomed)}")

    def _later_lengths(
        self,
        lowered: List[LoweredPattern],
        runs: Sequence[Tuple[int, int]],
        first: Optional["SharedLength"],
    ) -> List[LoweredPattern]:
        """The length shared by each run of cases after the first (see
        ``statements``), measured again by the run's first test:
        ``(size := len(subject) if ...) >= 1``. In a function, with ``:=``."""
        if self.scope_kind != "function" or not self.owner.target.has_walrus:
            return lowered
        name = first.name if first is not None else ""

        def new_name() -> str:
            return name or self.owner.names.readable("size")

        for start, end in runs:
            if self.subject_var is None and self._annotated_function():
                break  # as _shared_length
            length = SharedLength.of(self.subject, lowered[start:end], new_name)
            if length is None:
                continue
            name = length.name
            lowered[start:end] = [length.apply(p) for p in lowered[start:end]]
            lowered[start] = length.measured_first(lowered[start])
        return lowered

    def _declarations(
        self, cases: Sequence[cst.MatchCase], lowered: Sequence[LoweredPattern]
    ) -> List[str]:
        """Captures declared ``name: object`` before the chain, in a function.

        - Before 3.8, those a test stores through their cells (a guarded
          case's, an or-pattern's): the compiler must see them as locals of
          the function (keep-lines declares them on the match line).
        - In an annotated function, those cases capture from attributes of
          different classes: a type checker types a variable by its first
          assignment, where it typed a capture by the union of the match's
          captures; declared ``object``, each assignment narrows it to what
          it stores.

        Never a name the function binds otherwise, nor a global or nonlocal
        one: a declaration after a binding is an error for mypy (and of a
        global one, for CPython).
        """
        function = self.owner.scopes[-1].node
        if self.scope_kind != "function" or not isinstance(function, cst.FunctionDef):
            return []
        wanted: List[str] = []
        if not self.owner.target.has_walrus:
            for case, pattern in zip(cases, lowered):
                stored = [n for alt in _stores_in(pattern.cond) for n, _ in alt]
                if case.guard is not None:
                    stored += [name for name, _ in pattern.bindings]
                wanted += [name for name in stored if name not in wanted]
        if self._annotated_function():
            wanted += [n for n in _read_differently(lowered) if n not in wanted]
        if not wanted:
            return []
        bound = bound_besides(function, self.original)
        return [name for name in wanted if name not in bound]

    def _shared_length(
        self, lowered: Sequence[LoweredPattern]
    ) -> Optional["SharedLength"]:
        if self.subject_var is None and self._annotated_function():
            # A type checker reads ``shape[0]`` after ``size == 2`` with the
            # declared type of ``shape``, not narrowed to a sequence.
            return None
        return SharedLength.of(
            self.subject, lowered, lambda: self.owner.names.readable("size")
        )

    def _fields_once(self, pattern: LoweredPattern) -> LoweredPattern:
        """The helper's read of a class pattern's fields (for a class whose
        ``__match_args__`` only the running program knows) made once per
        case, into a variable named after the class:
        ``(point_fields := _spam.attrs(shape, Point, 2, ())) is not None``,
        then ``x, y = point_fields[0], point_fields[1]``."""
        helper = self.owner.lowering.helper_name
        if (
            not helper
            or not self.owner.target.has_walrus
            or self.scope_kind != "function"
        ):
            # ``:=`` is 3.8's; in a module or class body the variable would
            # stay an attribute (only where it was stored: no ``del``)
            return pattern
        return read_calls_once(
            _spelled_readably(pattern),
            f"{helper}.attrs(",
            self._fields_name,
            self._fields,
        )

    def _fields_name(self, call: str) -> str:
        cls = ast.parse(call, mode="eval").body.args[1]  # type: ignore[attr-defined]
        word = cls.attr if isinstance(cls, ast.Attribute) else getattr(cls, "id", "")
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", word).lower() or "class"
        return self.owner.names.readable(f"{snake}_fields")

    def _shared_keys(self, lowered: Sequence[LoweredPattern]) -> Optional[SharedKeys]:
        helper = self.owner.lowering.helper_name
        if not helper:
            return None  # no mapping check the helper answers
        keys = SharedKeys(self.subject, helper, lowered, self._key_variable)
        return keys if keys.keys else None

    def _key_variable(self, key: str) -> str:
        """``event_type`` for ``event.get("type")``."""
        value = ast.literal_eval(key)
        word = value if isinstance(value, str) and value.isidentifier() else "key"
        stem = self.subject if self.subject.isidentifier() else "value"
        return self.owner.names.readable(f"{stem}_{word}".lstrip("_"))

    def _annotated_function(self) -> bool:
        node = self.owner.scopes[-1].node
        if not isinstance(node, cst.FunctionDef):
            return False
        params = node.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        every += [
            p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)
        ]
        return node.returns is not None or any(p.annotation for p in every)

    def _assign_subject(self) -> cst.SimpleStatementLine:
        value = self.node.subject
        if isinstance(value, (cst.NamedExpr, cst.Tuple)) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        target = cst.AssignTarget(cst.Name(self.subject_var or "subject"))
        # The match line's comment stays on the line that replaces it.
        return cst.SimpleStatementLine(
            body=[cst.Assign(targets=[target], value=value)],
            trailing_whitespace=self.node.whitespace_after_colon,
        )

    def _case(
        self,
        case: cst.MatchCase,
        pattern: LoweredPattern,
        index: int,
        orelse: Optional[Union[cst.If, cst.Else]],
    ) -> Union[cst.If, cst.Else]:
        guard = case.guard
        body = _indented(case.body)
        first: List[cst.BaseStatement] = []
        if guard is None and pattern.bindings:
            first += self._binding_statements(case, pattern)
        if self._doomed:
            first.append(self._delete())
        if first:
            kept = [] if _only_pass(body) else list(body.body)
            body = body.with_changes(body=[*first, *kept])
        last = index == len(self.node.cases) - 1 and orelse is None
        if last and index > 0 and self._always_matches(case, pattern):
            return cst.Else(body=body, leading_lines=self._lines_before(index))
        test = self._test(pattern, guard)
        return cst.If(
            test=Raw(test),
            body=body,
            orelse=orelse,
            leading_lines=self._lines_before(index),
        )

    def _test(
        self, pattern: LoweredPattern, guard: Optional[cst.BaseExpression]
    ) -> str:
        parts: List[str] = []
        if not is_true(pattern.cond):
            cond = emit.render_cond(pattern.cond, readable=True, binder=self._binder())
            parts.append(cond)
        if guard is not None:
            if pattern.bindings:
                binder = self._binder()
                parts.append(emit.store_text(pattern.bindings, binder, readable=True))
            parts.append(emit.guard_operand(guard, self.owner.code(guard).strip()))
        if len(parts) > 1 and isinstance(pattern.cond, AnyOf):
            parts[0] = f"({parts[0]})"  # ``or`` binds looser than the ``and`` after it
        return " and ".join(parts) if parts else "True"

    def _binder(self) -> emit.Binder:
        owner = self.owner
        scope = owner.scopes[-1]
        if owner.target.has_walrus:
            return emit.walrus_binder()
        if scope.kind == "function":
            return emit.cell_binder(
                owner.names,
                owner.target,
                scope.declared_globals(),
                owner.mangle,
                owner.lowering.helper("store"),
            )
        if scope.kind == "class":
            return emit.class_binder(
                owner.names, owner.target, scope.declarations(), owner.mangle
            )
        return emit.namespace_binder(f"{owner.names.builtin('locals')}()", owner.mangle)

    def _binding_statements(
        self, case: cst.MatchCase, pattern: LoweredPattern
    ) -> List[cst.SimpleStatementLine]:
        unpacked = _unpacking(case.pattern, self.subject)
        if unpacked is not None:
            return [_statement(unpacked)]
        values = [
            emit.render_value(value, readable=True) for _, value in pattern.bindings
        ]
        names = [name for name, _ in pattern.bindings]
        together = f"{', '.join(names)} = {', '.join(values)}"
        if 1 < len(names) <= 3 and len(together) <= TOGETHER and " if " not in together:
            return [_statement(together)]
        return [
            _statement(f"{name} = {_unparenthesized(value)}")
            for name, value in zip(names, values)
        ]


class SharedLength:
    """The subject's length, computed once for cases that dispatch on it.

    Only when the first case opens with a sequence pattern on the subject:
    CPython takes the length there for any sequence, so computing it before
    the first case calls ``len()`` exactly when CPython does (PEP 634 lets
    later cases reuse it). It is -1 for anything but a sequence, so
    ``size == 2`` also says "a sequence" and the case's own
    ``isinstance(subject, _spam.Sequence)`` goes. A mapping pattern's
    ``len(subject) >= n`` keeps calling ``len()``.
    """

    def __init__(self, subject: str, name: str, check: Test, length: Test) -> None:
        self.subject = subject
        self.name = name
        taken = length.expr.rsplit(" ", 2)[0]  # ``len(subject)``, as spelled
        self.statement = f"{name} = {taken} if {check.readable or check.expr} else -1"

    @classmethod
    def of(
        cls,
        subject: str,
        patterns: Sequence[LoweredPattern],
        new_name: Callable[[], str],
    ) -> Optional["SharedLength"]:
        if not patterns:
            return None
        first = patterns[0].cond
        checks = [t for p in patterns for t in tests_in(p.cond)]
        if (
            not opens_with_sequence_length(first, subject)
            or sum(is_kind_test(t, subject, "sequence") for t in checks) < 2
        ):
            return None
        assert isinstance(first, All)
        check, length = first.parts[:2]
        assert isinstance(check, Test) and isinstance(length, Test)
        return cls(subject, new_name(), check, length)

    def measured_first(self, pattern: LoweredPattern) -> LoweredPattern:
        """``pattern`` (the first of those ``apply`` rewrote) storing the
        length where its test first reads it."""
        cond = pattern.cond
        parts = list(cond.parts) if isinstance(cond, All) else [cond]
        first = parts[0]
        assert isinstance(first, Test) and first.expr.startswith(self.name + " ")
        value = self.statement.split(" = ", 1)[1]
        parts[0] = Test(
            f"({self.name} := {value}){first.expr[len(self.name):]}",
            first.kind,
            first.path,
            first.fact,
        )
        return LoweredPattern(all_of(*parts), pattern.bindings)

    def apply(self, pattern: LoweredPattern) -> LoweredPattern:
        # Once the pattern matched, a value chosen by testing its
        # alternatives again reads the length of a sequence.
        matched = opens_with_sequence_check(pattern.cond, self.subject)
        bindings = tuple(
            (name, self._value(value, matched)) for name, value in pattern.bindings
        )
        return LoweredPattern(self._cond(pattern.cond, False), bindings)

    def _value(self, value: Value, in_sequence: bool) -> Value:
        if isinstance(value, str):
            return value
        options = value.options
        return Choice(
            tuple(
                (self._cond(cond, in_sequence), self._value(option, in_sequence))
                for cond, option in options
            )
        )

    def _cond(self, cond: Cond, in_sequence: bool) -> Cond:
        if isinstance(cond, Test):
            if in_sequence and is_length_test(cond, self.subject):
                assert isinstance(cond.fact, tuple)
                op, n = cond.fact
                return Test(f"{self.name} {op} {n}", "len", cond.path, cond.fact)
            return cond
        if isinstance(cond, AnyOf):
            alternatives = tuple(self._cond(a, in_sequence) for a in cond.alternatives)
            return AnyOf(alternatives, cond.stores)
        kept: List[Cond] = []
        for part, following in zip(cond.parts, [*cond.parts[1:], TRUE]):
            if isinstance(part, Test) and is_kind_test(part, self.subject):
                in_sequence = part.fact == "sequence"
                if in_sequence and starts_with_length(following, self.subject):
                    continue  # the shared length is -1 for anything else
            kept.append(self._cond(part, in_sequence))
        return all_of(*kept) if kept else TRUE


def _read_differently(lowered: Sequence[LoweredPattern]) -> List[str]:
    """Names two or more cases capture from attributes of different classes
    (``e.left.name`` of a ``Var`` in one case, ``e.left.value`` of a ``Num``
    in another): the captures a type checker may type differently from one
    case to another.

    Left out: reads the helper answers (a sequence's items, a mapping's
    values), whose types a type checker does not know (a variable declared
    ``object`` keeps that type where such a value is assigned); and names an
    or-pattern stores in its alternatives, joined by ``or`` (a type checker
    does not narrow a variable through them).
    """
    classes_read: Dict[str, set] = {}
    cases: Dict[str, int] = {}
    in_alternatives: set = set()
    for pattern in lowered:
        classes: Dict[str, set] = {}
        for test in tests_in(pattern.cond):
            if test.kind == "isinstance":
                classes.setdefault(test.path, set()).add(test.fact)
        stores = [pair for alt in _stores_in(pattern.cond) for pair in alt]
        in_alternatives.update(name for name, _ in stores)
        for name, value in pattern.bindings:
            cases[name] = cases.get(name, 0) + 1
            for text in _option_texts(value):
                owner, dot, _ = text.rpartition(".")
                if dot and owner in classes:
                    classes_read.setdefault(name, set()).update(classes[owner])
    return [
        name
        for name, found in classes_read.items()
        if cases[name] > 1 and len(found) > 1 and name not in in_alternatives
    ]


def _option_texts(value: Value) -> List[str]:
    if isinstance(value, str):
        return [value]
    return [text for _, option in value.options for text in _option_texts(option)]


def _stores_in(cond: Cond) -> List[Tuple[Tuple[str, Value], ...]]:
    """What an or-pattern's alternatives store in ``cond`` itself."""
    if isinstance(cond, Test):
        return []
    if isinstance(cond, All):
        return [stores for part in cond.parts for stores in _stores_in(part)]
    return [*cond.stores, *(s for alt in cond.alternatives for s in _stores_in(alt))]


def _spelled_readably(pattern: LoweredPattern) -> LoweredPattern:
    """``pattern`` with each test's readable spelling as its text."""

    def cond_of(cond: Cond) -> Cond:
        if isinstance(cond, Test):
            return Test(cond.readable or cond.expr, cond.kind, cond.path, cond.fact)
        if isinstance(cond, All):
            return All(tuple(cond_of(part) for part in cond.parts))
        stores = tuple(
            tuple((name, value_of(value)) for name, value in alternative)
            for alternative in cond.stores
        )
        return AnyOf(tuple(cond_of(a) for a in cond.alternatives), stores)

    def value_of(value: Value) -> Value:
        if isinstance(value, str):
            return value
        return Choice(tuple((cond_of(c), value_of(o)) for c, o in value.options))

    return LoweredPattern(
        cond_of(pattern.cond),
        tuple((name, value_of(value)) for name, value in pattern.bindings),
    )


def _unparenthesized(text: str) -> str:
    if text.startswith("(") and text.endswith(")") and " if " in text:
        return text[1:-1]
    return text


def _unpacking(pattern: cst.MatchPattern, subject: str) -> Optional[str]:
    """``a, *rest = subject`` when a sequence pattern only captures."""
    if not isinstance(pattern, (cst.MatchList, cst.MatchTuple)) or not pattern.patterns:
        return None
    targets = []
    for element in pattern.patterns:
        if isinstance(element, cst.MatchStar):
            if element.name is None:
                return None
            targets.append("*" + element.name.value)
        elif (
            isinstance(element.value, cst.MatchAs)
            and element.value.pattern is None
            and element.value.name is not None
        ):
            targets.append(element.value.name.value)
        else:
            return None
    text = ", ".join(targets)
    if len(targets) == 1:
        text = f"[{text}]" if text.startswith("*") else text + ","
    return f"{text} = {subject}"


def _only_pass(body: cst.IndentedBlock) -> bool:
    """A body that is one bare ``pass``, which what comes first replaces."""
    if len(body.body) != 1 or body.footer:
        return False
    line = body.body[0]
    return (
        isinstance(line, cst.SimpleStatementLine)
        and [type(small) for small in line.body] == [cst.Pass]
        and not line.leading_lines
        and line.trailing_whitespace.comment is None
    )


def _indented(body: cst.BaseSuite) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return body
    assert isinstance(body, cst.SimpleStatementSuite)
    smalls = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body]
    return cst.IndentedBlock(
        body=[
            cst.SimpleStatementLine(
                body=smalls, trailing_whitespace=body.trailing_whitespace
            )
        ]
    )


# -- the helper block ---------------------------------------------------------


def place_readable_helper(
    module: cst.Module, name: str, used: Iterable[str]
) -> cst.Module:
    """The helper as a block after the module's docstring, __future__ imports
    and leading imports."""
    text = helper_source(used)
    key = helper_key(text)
    # ``global``: under ``exec(code, globals, locals)`` the module's
    # functions read their globals, where a plain assignment would not go.
    # The namespace's __name__ is not the key it is kept under (cloudpickle
    # copies it by value then, instead of importing it).
    source = (
        f"global {name}\n"
        f'{name} = __import__("sys").modules.get("{key}")\n'
        f"if {name} is None:\n"
        f'    {name} = __import__("types").ModuleType("{HELPER_NAME}")\n'
        f"    exec({_block_string(text)}, vars({name}))\n"
        f'    {name} = __import__("sys").modules.setdefault("{key}", {name})\n'
    )
    block = list(cst.parse_module(source).body)
    body = list(module.body)
    index = 0
    if index < len(body) and _is_docstring(body[index]):
        index += 1
    while index < len(body) and _is_import(body[index]):
        index += 1
    following = body[index:] if index < len(body) else []
    block[0] = block[0].with_changes(leading_lines=[cst.EmptyLine()] if index else [])
    if following and not following[0].leading_lines:
        following[0] = following[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:index], *block, *following])


def _block_string(text: str) -> str:
    assert '"""' not in text and "\\" not in text
    return '"""\\\n' + text.rstrip("\n") + '"""'


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


# -- formatting ----------------------------------------------------------------


def format_readable(source: str, output: str, filename: str) -> str:
    """Black over the lines of ``output`` that are not ``source``'s own."""
    lines = changed_lines(source, output)
    if not lines:
        return output
    try:
        import black
    except ImportError:
        # black is a dependency: only a broken install gets here.
        raise NotInstalled(
            "the readable layout needs black 23.11 or newer, which "
            "spam-transpile depends on but cannot import here "
            "(pip install 'black>=23.11')",
            filename=filename,
            lineno=1,
            offset=1,
        ) from None
    mode = black.Mode(line_length=LINE_LENGTH)
    try:
        formatted = black.format_str(output, mode=mode, lines=_ranges(lines))
    except Exception:
        return output  # black's parser lags CPython's: keep it unformatted
    if not _same_ast(output, formatted):
        return output
    return formatted


def with_line_endings(source: str, output: str) -> str:
    """``output`` (lines ended by ``\\n``) with the source's usual line ending."""
    counts = {end: source.count(end) for end in ("\r\n", "\r")}
    crlf, cr = counts["\r\n"], counts["\r"] - counts["\r\n"]
    lf = source.count("\n") - crlf
    ending = max((lf, "\n"), (crlf, "\r\n"), (cr, "\r"))[1]
    return output if ending == "\n" else output.replace("\n", ending)


def changed_lines(source: str, output: str) -> List[int]:
    """1-based numbers of ``output``'s lines that ``source`` does not have there."""
    before = source.splitlines()
    after = output.splitlines()
    changed: List[int] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.extend(range(j1 + 1, j2 + 1))
    return changed


def _ranges(lines: Sequence[int]) -> List[Tuple[int, int]]:
    ranges: List[Tuple[int, int]] = []
    for number in lines:
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1] = (ranges[-1][0], number)
        else:
            ranges.append((number, number))
    return ranges


def _same_ast(before: str, after: str) -> bool:
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
