"""Readable layout: a subject whose type its function declares.

A reviewer reading ``def expect(self, token: Token)`` (``Token`` a
``NamedTuple`` of three fields) and ``match token: case (_, found, pos):``
does not test that ``token`` is a sequence of length three: the annotation
says so, and mypy checks the callers. This layout trusts the annotation of a
parameter the function never binds again, and of a local variable bound
only where it is annotated (``args: list[Expr] = []``), as it trusts
declarations
(README, Known limits): the opening tests a declared type answers are
dropped from every case.

What an annotation answers:

- ``list``, ``tuple`` (``List[int]``, ``tuple[int, ...]``): a sequence;
  ``Tuple[int, str]`` one of that length, and so a ``NamedTuple`` of the
  project (its fields);
- ``dict`` (``Dict[str, int]``), ``Mapping`` and ``MutableMapping``: a
  mapping;
- any class it names: ``isinstance`` with that class, spelled the same.

A local bound once, by a display or a comprehension (``found = [f(h) for h
in hosts]``), is known to be what that makes: not a declaration, exact.

``Sequence`` is not trusted: a ``str`` is one, and matches no sequence
pattern. Unions, ``Optional`` and string annotations answer nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, FrozenSet, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.lowering.declared_members import (
    attribute_annotation,
    method_returns,
)
from spam_transpile.lowering.facts import KnownClass, ModuleFacts
from spam_transpile.lowering.ir import All, Cond, LoweredPattern, Test, all_of
from spam_transpile.lowering.names import Names, is_builtin_class
from spam_transpile.lowering.scope_info import CLASS, FUNCTION, Scope
from spam_transpile.lowering.scopes import (
    binding_sites,
    own_cases,
    own_nodes,
    parameter_unchanged,
)
from spam_transpile.syntax.cstwalk import descendants, pattern_nodes

__all__ = [
    "DeclaredType",
    "declared_types",
    "trusting_declarations",
    "values_untyped",
]

_SEQUENCES = frozenset({"list", "tuple"})
_TYPING_SEQUENCES = {"List": "list", "Tuple": "tuple"}
_MAPPINGS = frozenset({"Dict", "Mapping", "MutableMapping"})
_MAPPING_MODULES = frozenset({"typing", "collections.abc"})


@dataclass(frozen=True)
class DeclaredType:
    #: "sequence" or "mapping", where the declaration says which
    kind: Optional[str] = None
    #: a sequence's length, where the declaration fixes it
    length: Optional[int] = None
    #: how the module spells the class the declaration names
    cls: Optional[str] = None
    #: a ``NamedTuple``'s fields, item by item
    items: Optional[Tuple[str, ...]] = None
    #: what each item of a sequence declared of one item type is
    #: (``list[Token]``, ``tuple[Token, ...]``)
    element: Optional["DeclaredType"] = None


def declared_subject_type(
    function: Optional[cst.CSTNode],
    subject: cst.BaseExpression,
    facts: ModuleFacts,
    builtin: Callable[[str], str],
    seen: FrozenSet[str] = frozenset(),
) -> Optional[DeclaredType]:
    """What the annotation of the parameter ``subject`` names says of it,
    where ``function`` never binds it again. ``builtin``: how the module
    spells a builtin (another spelling: the name is the module's own);
    ``seen``: the locals whose values led here (``a = b.split()``)."""
    if not isinstance(function, cst.FunctionDef) or not isinstance(subject, cst.Name):
        return None
    annotation = _annotation_of(function, subject.value)
    if annotation is not None:
        if not parameter_unchanged(function, subject.value):
            return None
        return _declared(annotation, facts, builtin)
    assigned = _only_assignment(function, subject.value)
    if assigned is None:
        return None
    value = assigned.value
    made = _displayed(value, builtin) if value is not None else None
    if isinstance(value, cst.Call) and subject.value not in seen:
        seen |= {subject.value}
        made = _str_method_result(function, value, facts, builtin, seen)
    if made is not None or not isinstance(assigned, cst.AnnAssign):
        return made
    return _declared(assigned.annotation.annotation, facts, builtin)


def values_untyped(
    function: Optional[cst.CSTNode],
    subject: cst.BaseExpression,
    facts: ModuleFacts,
    builtin: Callable[[str], str],
) -> bool:
    """Whether a type checker reads what the match finds in ``subject`` as
    ``Any``: ``subject`` is a parameter of ``function`` declared ``object``
    or ``Any``, or not at all, that it never binds again (a mapping check
    narrows it to ``Mapping[Any, Any]``, and so on down)."""
    if not isinstance(function, cst.FunctionDef) or not isinstance(subject, cst.Name):
        return False
    params = function.params
    found = [
        param
        for param in (*params.posonly_params, *params.params, *params.kwonly_params)
        if param.name.value == subject.value
    ]
    if not found:
        return _rest_of_untyped(function, subject.value, facts, builtin)
    if len(found) != 1 or not parameter_unchanged(function, subject.value):
        return False
    if found[0].annotation is None:
        return True
    annotation = found[0].annotation.annotation
    if isinstance(annotation, cst.Name) and annotation.value == "object":
        return builtin("object") == "object"
    if isinstance(annotation, cst.Name) and annotation.value == "Any":
        return facts.from_imports.get("Any") == ("typing", "Any")
    return False


def _rest_of_untyped(
    function: cst.FunctionDef,
    name: str,
    facts: ModuleFacts,
    builtin: Callable[[str], str],
) -> bool:
    """Whether ``name`` is bound once, as the ``**name`` of a mapping
    pattern in a match on such a parameter: a ``dict`` of its ``Any``s."""
    if binding_sites(function, name) != 1:
        return False
    for node in own_nodes(function):
        if not isinstance(node, cst.Match):
            continue
        if any(
            isinstance(part, cst.MatchMapping)
            and part.rest is not None
            and part.rest.value == name
            for case in node.cases
            for part in pattern_nodes(case.pattern)
        ):
            return isinstance(node.subject, cst.Name) and values_untyped(
                function, node.subject, facts, builtin
            )
    return False


def _displayed(
    value: cst.BaseExpression, builtin: Callable[[str], str]
) -> Optional[DeclaredType]:
    """What a display or a comprehension makes (exact: not a declaration);
    a tuple display's length where no element is starred."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return DeclaredType("sequence", cls=_unshadowed("list", builtin))
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return DeclaredType("mapping", cls=_unshadowed("dict", builtin))
    if isinstance(value, cst.Tuple):
        starred = any(isinstance(e, cst.StarredElement) for e in value.elements)
        length = None if starred else len(value.elements)
        return DeclaredType("sequence", length, _unshadowed("tuple", builtin))
    return None


def _only_assignment(
    function: cst.FunctionDef, name: str
) -> Optional[Union[cst.Assign, cst.AnnAssign]]:
    """``name = value`` (or ``name: T = value``) where that statement of the
    function's own is the only one that binds ``name``: where the match
    reads it, it holds that value (or nothing)."""
    if binding_sites(function, name) != 1:
        return None
    found = [node for node in own_nodes(function) if _assigns(node, name)]
    return found[0] if len(found) == 1 else None  # type: ignore[return-value]


def _assigns(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.AnnAssign):
        target = node.target
        return (
            node.value is not None
            and isinstance(target, cst.Name)
            and target.value == name
        )
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
        return isinstance(target, cst.Name) and target.value == name
    return False


def _annotation_of(
    function: cst.FunctionDef, name: str
) -> Optional[cst.BaseExpression]:
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name and param.annotation is not None:
            if isinstance(param.default, cst.Name) and param.default.value == "None":
                # ``tags: dict = None``: the annotation leaves out the default
                return None
            return param.annotation.annotation
    return None


def _declared(
    node: cst.BaseExpression, facts: ModuleFacts, builtin: Callable[[str], str]
) -> Optional[DeclaredType]:
    if isinstance(node, cst.Subscript):
        return _generic(node, facts, builtin)
    if not isinstance(node, cst.Name):
        return None
    name = node.value
    if name in _SEQUENCES | {"dict"} and builtin(name) == name:
        return DeclaredType("mapping" if name == "dict" else "sequence", cls=name)
    origin = _typing_name(node, facts)
    if origin in _TYPING_SEQUENCES:
        return DeclaredType("sequence")
    if origin in _MAPPINGS:
        return DeclaredType("mapping")
    known: Optional[KnownClass] = facts.declared.get(name)
    if known is None:
        return DeclaredType(cls=name) if is_builtin_class(name, builtin) else None
    if known.items is not None:
        return DeclaredType("sequence", len(known.items), name, known.items)
    return DeclaredType(cls=name)


def _generic(
    node: cst.Subscript, facts: ModuleFacts, builtin: Callable[[str], str]
) -> Optional[DeclaredType]:
    base = node.value
    if not isinstance(base, cst.Name):
        return None
    origin = _typing_name(base, facts)
    if origin is None and base.value in _SEQUENCES | {"dict"}:
        if builtin(base.value) == base.value:
            origin = {"list": "List", "tuple": "Tuple", "dict": "Dict"}[base.value]
    if origin in _MAPPINGS:
        return DeclaredType("mapping")
    # (``typing.List`` is ``list``: either names the class, where unshadowed)
    if origin == "List":
        element = _element(node, 1, facts, builtin)
        return DeclaredType(
            "sequence", None, _unshadowed("list", builtin), None, element
        )
    if origin == "Tuple":
        length = _tuple_length(node)
        element = _element(node, 2, facts, builtin) if length is None else None
        return DeclaredType(
            "sequence", length, _unshadowed("tuple", builtin), None, element
        )
    return None


def _element(
    node: cst.Subscript,
    arguments: int,
    facts: ModuleFacts,
    builtin: Callable[[str], str],
) -> Optional[DeclaredType]:
    """The item type of ``list[T]`` (``arguments`` 1) or ``tuple[T, ...]``
    (2: the second ``...``)."""
    values = _arguments(node)
    if values is None or len(values) != arguments:
        return None
    if arguments == 2 and not isinstance(values[1], cst.Ellipsis):
        return None
    return _declared(values[0], facts, builtin)


def _unshadowed(name: str, builtin: Callable[[str], str]) -> Optional[str]:
    return name if builtin(name) == name else None


def _arguments(node: cst.Subscript) -> Optional[List[cst.BaseExpression]]:
    """The types ``node`` subscripts its generic with (None: a slice)."""
    items = [element.slice for element in node.slice]
    if not all(isinstance(item, cst.Index) for item in items):
        return None
    return [item.value for item in items if isinstance(item, cst.Index)]


def _tuple_length(node: cst.Subscript) -> Optional[int]:
    """``Tuple[int, str]``: 2; ``Tuple[int, ...]`` and ``Tuple[()]``: None
    (any length, or a spelling left alone)."""
    values = _arguments(node)
    if values is None or any(isinstance(v, (cst.Ellipsis, cst.Tuple)) for v in values):
        return None
    return len(values)


def _typing_name(node: cst.Name, facts: ModuleFacts) -> Optional[str]:
    """``List`` after ``from typing import List``: "List" (likewise the
    mapping ABCs of ``collections.abc``)."""
    found = facts.from_imports.get(node.value)
    if found is None:
        return None
    module, name = found
    if module == "typing" and (name in _TYPING_SEQUENCES or name in _MAPPINGS):
        return name
    if module in _MAPPING_MODULES and name in _MAPPINGS:
        return name
    return None


def declared_types(
    scopes: Sequence[Scope],
    match: cst.Match,
    subjects: Sequence[Tuple[str, cst.BaseExpression]],
    facts: ModuleFacts,
    names: Names,
) -> List[Tuple[str, DeclaredType]]:
    """For ``match``, in the innermost of ``scopes``: the declared types of
    its ``subjects`` (each the text the cases read it by and the expression
    it holds), by that text."""
    found = []
    for path, expression in subjects:
        declared = _declared_type(scopes, expression, match, facts, names.builtin)
        if declared is not None:
            found.append((path, declared))
    return found


def trusting_declarations(
    patterns: List[LoweredPattern], declared: Sequence[Tuple[str, DeclaredType]]
) -> List[LoweredPattern]:
    """``patterns`` without the opening tests the ``declared`` types of the
    paths they test answer."""
    for path, what in declared:
        patterns = [trust_declared_type(p, path, what) for p in patterns]
    return patterns


def _declared_type(
    scopes: Sequence[Scope],
    expression: cst.BaseExpression,
    match: cst.Match,
    facts: ModuleFacts,
    builtin: Callable[[str], str],
) -> Optional[DeclaredType]:
    function = scopes[-1].node if scopes and scopes[-1].kind == FUNCTION else None
    if isinstance(function, cst.FunctionDef):
        if isinstance(expression, cst.Call):
            made = _str_method_result(function, expression, facts, builtin)
            if made is not None:
                return made
        if isinstance(expression, cst.Name):
            found = declared_subject_type(function, expression, facts, builtin)
            return found or rest_capture_type(function, expression.value, match)
        if _is_slice(expression):
            assert isinstance(expression, cst.Subscript)
            sliced = _declared_type(scopes, expression.value, match, facts, builtin)
            if sliced is None or sliced.kind != "sequence":
                return None
            # a list's slice is a list, a tuple's a tuple (of a NamedTuple
            # too: of no fields, of any length)
            kept = sliced.cls if sliced.cls in _SEQUENCES else None
            return DeclaredType("sequence", cls=kept, element=sliced.element)
        owner = (
            scopes[-2].node if len(scopes) > 1 and scopes[-2].kind == CLASS else None
        )
        if isinstance(owner, cst.ClassDef):
            declared = method_returns(owner, function, expression)
            if declared is None:
                declared = attribute_annotation(owner, function, expression)
            if declared is not None:
                return _declared(declared, facts, builtin)
    return None


#: the methods of ``str`` and ``bytes`` that make a list, and those that
#: make a tuple of three
_SPLITS = frozenset({"split", "rsplit", "splitlines"})
_PARTITIONS = frozenset({"partition", "rpartition"})


def _str_method_result(
    function: cst.FunctionDef,
    call: cst.Call,
    facts: ModuleFacts,
    builtin: Callable[[str], str],
    seen: FrozenSet[str] = frozenset(),
) -> Optional[DeclaredType]:
    """``command.split()`` where ``command`` is declared ``str`` (or
    ``bytes``), or is a text literal: a list; ``partition``: a tuple of
    three. (A subclass of ``str`` may make ``split`` return something
    else: trusted as the declaration is, as mypy does.)"""
    method = call.func
    if not isinstance(method, cst.Attribute) or not isinstance(
        method.value, (cst.Name, cst.SimpleString)
    ):
        return None
    if method.attr.value not in _SPLITS | _PARTITIONS:
        return None
    if isinstance(method.value, cst.Name):
        receiver = declared_subject_type(function, method.value, facts, builtin, seen)
        if receiver is None or receiver.cls not in ("str", "bytes"):
            return None
    if method.attr.value in _PARTITIONS:
        name = "tuple"
        length: Optional[int] = 3
    else:
        name, length = "list", None
    return DeclaredType("sequence", length, _unshadowed(name, builtin))


def _is_slice(expression: cst.BaseExpression) -> bool:
    """``x[a:b]`` (a slice, not an item)."""
    return (
        isinstance(expression, cst.Subscript)
        and len(expression.slice) == 1
        and isinstance(expression.slice[0].slice, cst.Slice)
    )


def rest_capture_type(
    function: cst.FunctionDef, name: str, match: cst.Match
) -> Optional[DeclaredType]:
    """For ``match name:`` in the body of a case that binds ``name`` with
    ``**name`` (a new dict) or ``*name`` (a new list), where every binding
    of ``name`` in the function is such a capture of the same kind: that
    type. Not a declaration but what the captures make, so exact."""
    sites = binding_sites(function, name)
    if not sites:
        return None
    kinds = set()
    captures, inside = 0, False
    for case in own_cases(function):
        found = _rest_captures(case.pattern, name)
        if found:
            captures += len(found)
            kinds.update(found)
            inside = inside or any(node is match for node in descendants(case.body))
    if captures != sites or len(kinds) != 1 or not inside:
        return None
    kind = kinds.pop()
    return DeclaredType(kind, cls=_REST[kind])


_REST = {"mapping": "dict", "sequence": "list"}


def _rest_captures(pattern: cst.MatchPattern, name: str) -> List[str]:
    """The kind of each capture of ``name`` by a ``**`` or a ``*`` in
    ``pattern``."""
    found = []
    for node in descendants(pattern):
        if isinstance(node, cst.MatchMapping) and node.rest is not None:
            if node.rest.value == name:
                found.append("mapping")
        if isinstance(node, cst.MatchStar) and node.name is not None:
            if node.name.value == name:
                found.append("sequence")
    return found


def trust_declared_type(
    pattern: LoweredPattern, path: str, declared: DeclaredType
) -> LoweredPattern:
    """``pattern`` without the opening tests on ``path`` that ``declared``
    answers."""
    parts = pattern.cond.parts if isinstance(pattern.cond, All) else (pattern.cond,)
    kept: Tuple[Cond, ...] = tuple(
        part for part in parts if not _answered(part, path, declared)
    )
    if len(kept) == len(parts):
        return pattern
    return LoweredPattern(all_of(*kept), pattern.bindings)


def _answered(part: Cond, path: str, declared: DeclaredType) -> bool:
    if not isinstance(part, Test) or part.path != path:
        return False
    if part.kind == "kind":
        return declared.kind is not None and part.fact == declared.kind
    if part.kind == "len" and declared.length is not None:
        return _length_holds(part.fact, declared.length)
    if part.kind == "isinstance":
        return declared.cls is not None and part.fact == declared.cls
    return False


def _length_holds(fact: object, length: int) -> bool:
    if not isinstance(fact, tuple) or len(fact) != 2:
        return False
    how, n = fact
    return (how == "==" and n == length) or (how == ">=" and n <= length)
