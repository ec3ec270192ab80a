"""Which text a match statement reads its subject through: a local name (or
a tuple display of them) that nothing between the cases can rebind is read
again by each case, with no temporary."""

from __future__ import annotations

import builtins
import keyword
import re

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, FrozenSet, List, Optional, Tuple

import libcst as cst

from spam_transpile.lowering.paths import Subject, tuple_display
from spam_transpile.lowering.scope_info import FUNCTION, Scope
from spam_transpile.lowering.scopes import bound_before, names_rebound_by

if TYPE_CHECKING:
    from spam_transpile.lowering.transformer import MatchLowering


def local_subject(
    owner: "MatchLowering", scope: Scope, original: cst.Match, subject: cst.CSTNode
) -> Optional[Subject]:
    """The subject when it is a local name, or a tuple display of local names,
    that nothing between the cases can rebind: each case reads it again, and
    it needs no temporary."""
    if scope.kind != FUNCTION:
        return None
    elements = subject.elements if isinstance(subject, cst.Tuple) else [subject]
    names = []
    for element in elements:
        value = element.value if isinstance(element, cst.Element) else element
        if not isinstance(value, cst.Name) or value.lpar:
            return None
        names.append(value.value)
    stable = scope.stable_names(":=" in owner.source)
    rebound = names_rebound_by(original, owner.source)
    if not names or any(n not in stable or n in rebound for n in names):
        return None
    if not isinstance(subject, cst.Tuple):
        return Subject(names[0])
    # ``match a, b:`` over local names: no tuple, no checks.
    return tuple_subject(names)


def split_tuple_subject(
    owner: "MatchLowering",
    scope: Scope,
    original: cst.Match,
    subject: cst.CSTNode,
    new_name: Callable[[], str],
) -> Optional[Tuple[Subject, str, cst.BaseExpression]]:
    """Readable layout: ``match self.peek(), level:`` over local names but
    one element, as ``subject = self.peek()`` (returned: the subject, the
    new variable, and what it holds) and a tuple of ``subject`` and ``level``,
    which each case reads again. The other elements are locals nothing
    rebinds while the match runs: read later, each gives what CPython read
    when it made the tuple."""
    if scope.kind != FUNCTION or not isinstance(subject, cst.Tuple):
        return None
    values = [e.value for e in subject.elements if isinstance(e, cst.Element)]
    if len(values) != len(subject.elements):
        return None  # a starred element
    computed = [v for v in values if not isinstance(v, cst.Name) or v.lpar]
    if len(computed) != 1:
        return None
    stable = scope.stable_names(":=" in owner.source)
    rebound = names_rebound_by(original, owner.source)
    names = [v.value for v in values if isinstance(v, cst.Name) and v not in computed]
    if any(name not in stable or name in rebound for name in names):
        return None
    # Read later, an unbound name would raise later, or not at all.
    assert isinstance(scope.node, cst.FunctionDef)
    if not set(names) <= bound_before(scope.node, original):
        return None
    var = new_name()
    parts = [var if v is computed[0] else v.value for v in values]  # type: ignore
    return tuple_subject(parts), var, computed[0]


def tuple_subject(names: List[str]) -> Subject:
    text = tuple_display(names)
    info = Subject(text, "sequence", len(names))
    info.elements = list(names)
    return info


@dataclass
class ChosenSubject:
    """How the readable layout reads a match's subject."""

    #: the text each case reads it by
    text: str
    #: the variable the match assigns, if any
    var: Optional[str]
    info: Subject
    #: what ``var`` holds where it is one element of a tuple subject
    computed: Optional[cst.BaseExpression] = None

    def assignment(self, match: cst.Match) -> cst.SimpleStatementLine:
        """``subject = ...``, keeping the match line's comment."""
        value = self.computed or match.subject
        if isinstance(value, (cst.NamedExpr, cst.Tuple)) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        target = cst.AssignTarget(cst.Name(self.var or "subject"))
        return cst.SimpleStatementLine(
            body=[cst.Assign(targets=[target], value=value)],
            trailing_whitespace=match.whitespace_after_colon,
        )

    def read_as(
        self, subject: cst.BaseExpression
    ) -> List[Tuple[str, cst.BaseExpression]]:
        """What the cases read, by the text they read it by: the variable
        and what it holds, or a local name itself; for a tuple of local
        names but one, each element."""
        if self.computed is not None:
            assert isinstance(subject, cst.Tuple) and self.info.elements
            values = [element.value for element in subject.elements]
            return list(zip(self.info.elements, values))
        return [(self.var or self.text, subject)]

    def stable(self) -> FrozenSet[str]:
        """The variables the subject is read by, which nothing rebinds while
        the match runs: the match's own, and the local names it reads."""
        if self.var is not None and self.computed is None:
            return frozenset({self.var})
        return frozenset(self.info.elements or [self.text])


#: prefixes of a function's name that say it gets what the rest names
_GETTERS = ("get_", "read_", "next_", "parse_", "load_", "fetch_", "current_")
#: what the methods of ``str`` that split it make
_SPLITS = {"split": "parts", "rsplit": "parts", "splitlines": "lines"}


def subject_hints(
    node: cst.BaseExpression, declared: Optional[str] = None
) -> Tuple[str, ...]:
    """Names for a variable holding the subject ``node``, the best first,
    ``subject`` last: ``status`` for ``order.status``, ``token`` for
    ``self.get_token()``, ``parts`` for ``line.split()``; else after the
    class it is ``declared`` to be (``line_item`` for ``LineItem``)."""
    hint: Optional[str] = None
    if isinstance(node, cst.Attribute):
        hint = node.attr.value
    elif isinstance(node, cst.Call):
        func = node.func
        name = (
            func.attr.value
            if isinstance(func, cst.Attribute)
            else func.value if isinstance(func, cst.Name) else ""
        )
        if name in _SPLITS:
            hint = _SPLITS[name]
        else:
            hint = next((name[len(p) :] for p in _GETTERS if name.startswith(p)), None)
    if hint is None and declared is not None and declared.isidentifier():
        hint = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", declared).lower()
    if hint is not None:
        hint = hint.strip("_")
    if (
        hint
        and hint.isidentifier()
        and hint.islower()
        and not keyword.iskeyword(hint)
        and not hasattr(builtins, hint)  # (``order.type``: ``type`` is read)
    ):
        return (hint, "subject")
    return ("subject",)


def readable_subject(
    owner: "MatchLowering",
    scope: Scope,
    original: cst.Match,
    node: cst.BaseExpression,
    new_name: Callable[[], str],
) -> ChosenSubject:
    """The readable layout's subject: a local name as it is
    (:func:`local_subject`), a tuple of them but one element
    (:func:`split_tuple_subject`), else a variable of its own."""
    local = local_subject(owner, scope, original, node)
    if local is not None:
        return ChosenSubject(local.text, None, local)
    split = split_tuple_subject(owner, scope, original, node, new_name)
    if split is not None:
        info, var, computed = split
        return ChosenSubject(info.text, var, info, computed)
    var = new_name()
    info = Subject(var)
    if isinstance(node, cst.Tuple) and not any(
        isinstance(e, cst.StarredElement) for e in node.elements
    ):
        info = Subject(var, "sequence", len(node.elements))
        info.elements = [f"{var}[{i}]" for i in range(len(node.elements))]
    return ChosenSubject(var, var, info)
