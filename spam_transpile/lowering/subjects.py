"""Which text a match statement reads its subject through: a local name (or
a tuple display of them) that nothing between the cases can rebind is read
again by each case, with no temporary."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

import libcst as cst

from spam_transpile.lowering.paths import Subject, tuple_display
from spam_transpile.lowering.scope_info import FUNCTION, Scope
from spam_transpile.lowering.scopes import names_rebound_by

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


def tuple_subject(names: List[str]) -> Subject:
    text = tuple_display(names)
    info = Subject(text, "sequence", len(names))
    info.elements = list(names)
    return info
