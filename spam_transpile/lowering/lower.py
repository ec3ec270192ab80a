"""Lower one case's pattern to a condition and bindings (see :mod:`.ir`).

One ``lower_<kind>`` function per pattern kind, each taking the pattern and
the path (:mod:`.paths`) that reads its subject, and returning a condition
and the bindings the pattern makes: here the captures, values, singletons
and sequences; or-patterns in :mod:`.lower_or`, mappings in
:mod:`.lower_mapping`, classes in :mod:`.lower_class`. Checks follow the order of CPython's
pattern compiler (``compiler_pattern_*`` in 3.10's ``compile.c``):

- sequence: kind check, ``len``, then the items, read by index (``s[i]``
  before a star, ``s[len(s) - k]`` after it: never a negative index);
- mapping: kind check, ``len(s) >= #keys``, the keys' duplicate check for
  value-pattern keys, one ``get(key, MISSING)`` per key, then sub-patterns;
- class: the type check, isinstance, the attributes, then sub-patterns.

Facts known at transpile time (:mod:`.facts`) drop checks: a dataclass of
this module has known ``__match_args__`` and fields its ``__init__`` always
sets, a builtin like ``int`` matches itself, and a subject the match
statement spells as a tuple display has a known kind and length.
"""

from __future__ import annotations

import re
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

import libcst as cst

from spam_transpile.syntax.codegen import without_parens
from spam_transpile.lowering.facts import KnownClass, ModuleFacts
from spam_transpile.lowering.ir import (
    TRUE,
    Choice,
    Cond,
    LoweredPattern,
    Test,
    all_of,
    placed,
)
from spam_transpile.lowering.names import Names
from spam_transpile.settings import Target
from spam_transpile.lowering.stdlib_classes import (
    exact_stdlib_class,
    in_stdlib,
    is_stdlib_class,
    stdlib_match_args,
)
from spam_transpile.lowering.paths import (
    Bindings,
    Lowered,
    Subject,
    atom,
    is_wildcard,
    kind_test,
    len_test,
    operand,
)
from spam_transpile.lowering.lower_class import lower_class
from spam_transpile.lowering.lower_mapping import lower_mapping
from spam_transpile.lowering.subpatterns import literal_fact
from spam_transpile.lowering.lower_or import (
    lower_or,
    narrows,
    stores_in_last_alternatives,
)


class Lowering:
    """Lowers patterns of one module."""

    def __init__(
        self,
        names: Names,
        code: Callable[[cst.CSTNode], str],
        facts: ModuleFacts,
        inline_class_checks: bool = False,
        readable: bool = False,
        target: Target = Target(3, 9),
    ) -> None:
        self.names = names
        #: the oldest interpreter the output runs on: what the standard
        #: library binds from there on is known (:func:`exact_stdlib_class`)
        self.target = target
        #: keep-lines: a class pattern's class is checked with a builtin
        #: call where it is a plain class, the helper's only where it is not
        self.inline_class_checks = inline_class_checks
        #: the readable layout: what a reviewer takes as declared is not
        #: checked again (:meth:`known_class`, :meth:`trusts_class`), and
        #: tests are spelled as a person writes them
        self.readable = readable
        #: readable, in a function a type checker checks (annotated): the
        #: values chosen by an or-pattern's alternatives are stored as they
        #: match where the target has ``:=`` (:func:`stores_in_last_alternatives`)
        self.typed = False
        self.typed_stores = False
        #: readable, typed: a case whose chosen values a type checker cannot
        #: follow reads its classes at run time (values typed ``Any``)
        self._untrusted = False
        self.code = code
        self.facts = facts
        #: the helper's parts the module uses
        self.used_parts: set = set()
        #: how many uses of the helper the emitters wrote so far
        self.uses = 0
        self._helper = ""
        #: readable: a ``collections.abc`` class -> the name the module
        #: reads it by, and which of those it must import (see :meth:`abc`)
        self.abc_names: Dict[str, str] = {}
        self.abc_imports: Dict[str, str] = {}
        #: readable, where the mappings the match tests hold values typed
        #: ``Any`` (its subject is a parameter declared ``object``): a key's
        #: class check may read ``get``, but for these captures (None: no
        #: key's may)
        self.untyped_mappings: Optional[FrozenSet[str]] = None
        #: readable: a mapping check spelled ``isinstance(x, Mapping)``,
        #: without the ``dict`` that answers at once (line_fit.py)
        self.abc_mappings = False
        #: likewise ``isinstance(x, Sequence)``, without ``list`` and ``tuple``
        self.abc_sequences = False
        #: readable: the item paths of sequences declared of one item type,
        #: each with that type (a ``DeclaredType``), as the lowering reads them
        self.declared_items: List[Tuple[str, Any]] = []
        #: readable: the paths declared to hold a ``list`` (their slices are
        #: lists already: ``words[2:]`` for ``*rest``)
        self.known_lists: FrozenSet[str] = frozenset()
        #: readable, where lines keep to a limit narrower than black's: how
        #: wide an or-pattern's alternative may be after the checks the
        #: others share with it; whether one wider is written whole
        #: (line_fit.py), and whether one was wider
        self.alternative_width: Optional[int] = None
        self.unfactor_wide = False
        self.factored_wide = False
        #: readable: the ``collections.abc`` names the written code reads
        self.used_abcs: Set[str] = set()
        #: keep-lines, while a case whose line was too wide is lowered again:
        #: checks written in the fewest characters, at the cost of a call
        #: or a second read: kinds by the helper alone (no exact types
        #: first), ``hasattr()`` for an attribute, a class by ``cls()``
        #: alone (case_headers.WIDEST)
        self.compact_checks = False
        #: keep-lines, while a case header over several lines is lowered: the
        #: line of a pattern node, counted from the ``case`` line
        self.line_of: Optional[Callable[[cst.CSTNode], int]] = None
        #: the pattern being lowered (the parent of those it lowers)
        self._within: Optional[cst.MatchPattern] = None

    @property
    def used_helper(self) -> bool:
        return bool(self.used_parts)

    @property
    def helper_name(self) -> str:
        return self._helper

    def note_used(self, text: str) -> None:
        """Record the helper's parts that ``text``, the whole code written for
        a match statement, uses (the helper's name is one no user name
        shadows, so a mention is a use)."""
        if self._helper and self._helper + "." in text:
            found = re.findall(re.escape(self._helper) + r"\.(\w+)", text)
            self.used_parts.update(found)
        for cls, name in self.abc_imports.items():
            # a name the module did not bind before: a mention is a use
            if re.search(rf"(?<![\w.]){name}\b", text):
                self.used_abcs.add(cls)

    def known_class(self, node: cst.BaseExpression) -> Optional[KnownClass]:
        """What is known of the class a class pattern names: the module's
        facts (exact); in the readable layout, also what the declarations
        of the class say (:mod:`.project_facts`), which a reviewer trusts."""
        text = dotted_name(node)
        if text is None:
            return None
        exact = self.facts.known_class(text) if "." not in text else None
        if exact is None:
            exact = self._exact_stdlib_class(node)
        declared = None
        if self.readable and not self._untrusted:
            declared = self.facts.declared.get(text) or self._stdlib_class(node)
        if exact is None or declared is None:
            return exact or declared
        fields = tuple(dict.fromkeys(exact.fields + declared.fields))
        immutable = tuple(dict.fromkeys(exact.immutable + declared.immutable))
        return KnownClass(
            exact.match_args, fields, exact.inherited, immutable=immutable
        )

    def trusts_class(self, node: cst.BaseExpression) -> bool:
        """Readable layout: whether a class pattern's class is trusted to be
        a class without the check CPython makes (a plain ``isinstance``):
        one the module or its project declares, or one a top-level import
        binds (README, Known limits). Alternatives that choose a capture
        need no run-time check either: the enclosing ``if`` narrows the
        subject to one of their classes, and the choice's own test to one."""
        if not self.readable or self._untrusted:
            return False
        if self.known_class(node) is not None:
            return True
        facts = self.facts
        if isinstance(node, cst.Name):
            if node.value in facts.relative_imports:
                return True
            module = facts.from_imports.get(node.value, ("", ""))[0]
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            module = facts.imports.get(node.value.value, "")
        else:
            return False
        # what the standard library binds is looked up (known_class)
        return bool(module) and not in_stdlib(module)

    def _exact_stdlib_class(self, node: cst.BaseExpression) -> Optional[KnownClass]:
        """A standard library class as every interpreter from the target on
        has it, unless the module sets its ``__match_args__``."""
        set_here = self.facts.match_args_set
        spelled = node if isinstance(node, cst.Name) else getattr(node, "value", None)
        if set_here is None or not isinstance(spelled, cst.Name):
            return None
        if spelled.value in set_here:
            return None
        return exact_stdlib_class(
            self.facts.imports, self.facts.from_imports, node, self.target.minor
        )

    def _stdlib_class(self, node: cst.BaseExpression) -> Optional[KnownClass]:
        """A standard library class, with the attributes its
        ``__match_args__`` name taken as there (README, Known limits)."""
        imports, from_imports = self.facts.imports, self.facts.from_imports
        if not is_stdlib_class(imports, from_imports, node):
            return None
        names = stdlib_match_args(imports, from_imports, node)
        return KnownClass(names, names or ())

    def abc(self, cls: str) -> str:
        """The name the readable layout checks a sequence or mapping with:
        ``Sequence`` or ``Mapping`` of ``collections.abc``, as the module
        already imports it (from there or from ``typing``), else imported
        under its own name, or a fresh one where the module uses that."""
        name = self.abc_names.get(cls)
        if name is not None:
            return name
        if self.facts.from_imports.get(cls) in (
            ("collections.abc", cls),
            ("typing", cls),
        ):
            name = cls
        elif self.facts.bound is not None and not self.facts.unseen:
            free = cls not in self.facts.bound
            name = self.names.claim(cls) if free else self.names.readable(cls)
            self.abc_imports[cls] = name
        else:
            name = self.abc_imports[cls] = self.names.readable(cls)
        self.abc_names[cls] = name
        return name

    def helper(self, attribute: str) -> str:
        """``_spam.<attribute>``. Which parts the module uses is read from the
        code of each lowered match statement once it is written
        (:meth:`note_used`); this only counts that the helper was asked for."""
        if not self._helper:
            self._helper = self.names.helper_name()
        if attribute:
            self.uses += 1
        return f"{self._helper}.{attribute}"

    def lower_case(
        self, pattern: cst.MatchPattern, subject: Union[str, Subject]
    ) -> LoweredPattern:
        if isinstance(subject, str):
            subject = Subject(subject)
        cond, bindings = self.lower(pattern, subject)
        cond, bindings = stores_in_last_alternatives(cond, bindings, self.typed_stores)
        if self.typed and not self._untrusted and _choices_lost(bindings):
            self._untrusted = True
            try:
                return self.lower_case(pattern, subject)
            finally:
                self._untrusted = False
        return LoweredPattern(cond, tuple(bindings))

    def lower(self, pattern: cst.MatchPattern, v: Subject) -> Lowered:
        if self.line_of is None:
            return self._lower(pattern, v)
        # Each check goes on the line of the pattern CPython 3.10 runs it
        # for (its compiler sets the line of every pattern node it enters).
        within, self._within = self._within, pattern
        try:
            cond, bindings = self._lower(pattern, v)
        finally:
            self._within = within
        return placed(cond, self.line_of(pattern)), bindings

    def apart(self, sub: cst.MatchPattern) -> bool:
        """Whether ``sub`` starts on another line than the pattern holding it:
        a test reading an item, key or attribute for it (where CPython reads
        it, on the holding pattern's line) cannot also compare it (on the
        sub-pattern's line)."""
        if self.line_of is None or self._within is None:
            return False
        return self.line_of(sub) != self.line_of(self._within)

    def on_line_of(self, pattern: cst.MatchPattern, test: Test) -> Test:
        """``test``, a check of ``pattern`` its parent writes, on its line."""
        if self.line_of is None:
            return test
        return placed(test, self.line_of(pattern))  # type: ignore[return-value]

    def _lower(self, pattern: cst.MatchPattern, v: Subject) -> Lowered:
        # Exact types: isinstance() on LibCST's classes goes through ABCMeta.
        if type(pattern) is cst.MatchAs:
            return lower_as(self, pattern, v)
        if type(pattern) is cst.MatchValue:
            return lower_value(self, pattern, v)
        if type(pattern) is cst.MatchSingleton:
            return lower_singleton(self, pattern, v)
        if type(pattern) is cst.MatchOr:
            return lower_or(self, pattern, v)
        if type(pattern) is cst.MatchList or type(pattern) is cst.MatchTuple:
            return lower_sequence(self, pattern, v)
        if type(pattern) is cst.MatchMapping:
            return lower_mapping(self, pattern, v)
        if type(pattern) is cst.MatchClass:
            return lower_class(self, pattern, v)
        raise TypeError(f"unknown pattern node {type(pattern).__name__}")

    # -- helpers shared by the kinds -------------------------------------------

    def expr(self, node: cst.BaseExpression) -> str:
        """Source of ``node`` as a self-contained expression."""
        text = self.code(without_parens(node)).strip()
        if type(node) in _BARE:
            return text
        if type(node) in _BARE_ON_ONE_LINE and "\n" not in text:
            return text
        return f"({text})"

    def b(self, name: str) -> str:
        return self.names.builtin(name)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.C`` for a name or a chain of attributes of a name, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


# Expressions that need no parentheses around them (exact types, as above).
_BARE = frozenset([cst.Name, cst.Attribute, cst.Integer, cst.Float])


_BARE_ON_ONE_LINE = frozenset([cst.SimpleString, cst.Imaginary])


def lower_as(low: Lowering, p: cst.MatchAs, v: Subject) -> Lowered:
    cond: Cond = TRUE
    bindings: Bindings = []
    if p.pattern is not None:
        cond, bindings = low.lower(p.pattern, v)
    if p.name is not None:
        bindings.append((p.name.value, v.text))
    return cond, bindings


def lower_value(low: Lowering, p: cst.MatchValue, v: Subject) -> Lowered:
    # PEP 634: a value pattern succeeds if ``subject == value``, with the
    # subject on the left (that decides which __eq__ runs first).
    text = f"{atom(v.text)} == {operand(low, p.value)}"
    return Test(text, "eq", v.text, literal_fact(p.value)), []


def lower_singleton(low: Lowering, p: cst.MatchSingleton, v: Subject) -> Lowered:
    value = p.value.value
    return Test(f"{atom(v.text)} is {value}", "is", v.text, value), []


def lower_sequence(
    low: Lowering, p: Union[cst.MatchList, cst.MatchTuple], v: Subject
) -> Lowered:
    elements: Sequence[Union[cst.MatchSequenceElement, cst.MatchStar]] = p.patterns
    size = len(elements)
    star: Optional[int] = next(
        (i for i, e in enumerate(elements) if isinstance(e, cst.MatchStar)), None
    )
    fixed = size if star is None else size - 1
    tests: List[Cond] = []
    if v.kind != "sequence":
        tests.append(kind_test(low, v, "sequence"))
    if v.length is not None:
        fits = v.length == size if star is None else v.length >= fixed
        if not fits:
            return Test("False", "len", v.text, ("never", 0)), []
    elif star is None:
        tests.append(len_test(low, v, "==", size))
    elif fixed:
        tests.append(len_test(low, v, ">=", fixed))
    bindings: Bindings = []
    for i, element in enumerate(elements):
        if isinstance(element, cst.MatchStar):
            if element.name is not None:
                bindings.append((element.name.value, _star_items(low, v, i, size)))
            continue
        if is_wildcard(element.value):
            continue
        item = _item(low, v, i, star, size)
        cond, inner = low.lower(element.value, item)
        tests.append(cond)
        bindings.extend(inner)
    return all_of(*tests), bindings


def _star_items(low: Lowering, v: Subject, start: int, size: int) -> str:
    """The list a star capture at ``start`` takes: in the readable layout
    sliced from a list of the items (CPython iterates the subject to
    unpack it too), else by indexing (:mod:`.runtime`, ``items``)."""
    end = size - start - 1
    if low.readable:
        items = f"{low.b('list')}({v.text})"
        if not start and not end:
            return items  # ``[*rest]``: a new list of them all
        if v.text in low.known_lists:
            items = atom(v.text)  # (a list's slice is a new list)
        return f"{items}[{start or ''}:{-end if end else ''}]"
    return f"{low.helper('items')}({v.text}, {start}, {end})"


def _item(low: Lowering, v: Subject, i: int, star: Optional[int], size: int) -> Subject:
    if v.elements is not None:
        path = v.elements[i if star is None or i < star else i - size]
        element = Subject(path)
        element.items = v.element_items.get(path)
        element.item_type = v.element_item_types.get(path)
        return element
    if (star is None or i < star) and v.items is not None and i < len(v.items):
        return Subject(f"{atom(v.text)}.{v.items[i]}")  # a declared NamedTuple
    if star is None or i < star:
        return _declared_item(low, v, f"{atom(v.text)}[{i}]")
    # CPython indexes after the star with a non-negative ``len(s) - k``.
    if v.text.isidentifier() or low.readable:
        path = f"{atom(v.text)}[{low.b('len')}({v.text}) - {size - i}]"
        return _declared_item(low, v, path)
    # A longer path is written once (nested stars would double it each level).
    return Subject(f"{low.helper('back')}({v.text}, {size - i})")


def _declared_item(low: Lowering, v: Subject, path: str) -> Subject:
    """The item of ``v`` at ``path``; in a sequence declared of one item
    type (readable: ``list[Token]``), one of that type, which the readable
    layout trusts as it trusts ``v``'s (:attr:`Lowering.declared_items`)."""
    item = Subject(path)
    declared = v.item_type
    if declared is not None:
        item.items = declared.items
        item.item_type = declared.element
        low.declared_items.append((path, declared))
    return item


def _choices_lost(bindings: Bindings) -> bool:
    """Whether a value is chosen by alternatives a type checker does not
    narrow the choice by (:func:`.lower_or.narrows`)."""
    return any(
        isinstance(value, Choice) and not narrows(value.options)
        for _, value in bindings
    )
