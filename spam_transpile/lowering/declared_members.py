"""Readable layout: what a class declares of the members a method reads on
``self``: the return annotation of a method it defines, the annotation of
an attribute its ``__init__`` sets (declared_subjects.py trusts them)."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from spam_transpile.lowering.scopes import parameter_unchanged
from spam_transpile.syntax.cstwalk import descendants

__all__ = ["attribute_annotation", "method_returns"]


def method_returns(
    owner: cst.ClassDef, method: cst.FunctionDef, call: cst.BaseExpression
) -> Optional[cst.BaseExpression]:
    """For ``self.take()`` in ``method`` of ``owner``, where ``self`` is its
    first parameter and nothing binds it again: the return annotation of the
    ``def take(self) -> Token`` the class body defines (once, undecorated,
    nothing else of the body binding the name). A subclass that overrides
    it is taken to keep the annotation, as a type checker takes it."""
    if not isinstance(call, cst.Call) or call.args:
        return None
    name = _self_attribute(method, call.func)
    if name is None or not isinstance(owner.body, cst.IndentedBlock):
        return None
    found = [s for s in owner.body.body if _binds(s, name)]
    if len(found) != 1 or not isinstance(found[0], cst.FunctionDef):
        return None
    target = found[0]
    if target.decorators or target.returns is None or target.asynchronous:
        return None
    return target.returns.annotation


def _binds(statement: cst.BaseStatement, name: str) -> bool:
    """Whether a statement of a class body binds ``name`` there (a ``def``,
    a ``class``, or any assignment or import that spells it)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement.name.value == name
    return any(
        isinstance(node, cst.Name) and node.value == name
        for node in descendants(statement)
    )


#: a class defining one of these may answer any attribute read otherwise
_ATTRIBUTE_HOOKS = frozenset({"__getattr__", "__getattribute__", "__setattr__"})


def attribute_annotation(
    owner: cst.ClassDef, method: cst.FunctionDef, read: cst.BaseExpression
) -> Optional[cst.BaseExpression]:
    """For ``self.tokens`` in ``method`` of ``owner`` (``self`` its first
    parameter, nothing binding it again): the annotation that declares the
    attribute, where the class sets it once, first thing in ``__init__``
    (``self.tokens = tokens``, of the parameter ``tokens: list[Token]``
    nothing binds again there; or ``self.tokens: list[Token] = ...``), or
    its body annotates it (``tokens: list[Token]``) and sets it only there.
    No other method of the class stores, deletes or binds the attribute,
    and the class has no attribute hooks. Code elsewhere that sets it to
    something else breaks the declaration a type checker holds it to
    (README, Known limits: declarations are trusted)."""
    own = _self_attribute(method, read)
    body = owner.body
    if own is None or not isinstance(body, cst.IndentedBlock):
        return None
    init = [s for s in body.body if _binds(s, "__init__")]
    if len(init) != 1 or not isinstance(init[0], cst.FunctionDef):
        return None
    if any(_binds(s, hook) for s in body.body for hook in _ATTRIBUTE_HOOKS):
        return None
    declared = [s for s in body.body if _binds(s, own)]
    stores = _stores_of(owner, own)
    set_in_init = _set_first_in(init[0], own)
    if len(stores) != 1 or set_in_init is None or stores[0] is not set_in_init[0]:
        return None
    if declared:
        return _class_annotation(declared, own)
    return set_in_init[1]


def _self_attribute(method: cst.FunctionDef, read: cst.BaseExpression) -> Optional[str]:
    """``name`` for ``self.name`` in ``method`` (not a static or class
    method), where ``self`` is its first parameter and nothing binds it
    again."""
    params = [*method.params.posonly_params, *method.params.params]
    if (
        method.decorators
        or not params
        or not isinstance(read, cst.Attribute)
        or not isinstance(read.value, cst.Name)
        or read.value.value != params[0].name.value
        or not parameter_unchanged(method, read.value.value)
    ):
        return None
    return read.attr.value


def _stores_of(owner: cst.ClassDef, name: str) -> List[cst.CSTNode]:
    """The targets in ``owner`` that store or delete ``anything.name``."""
    found: List[cst.CSTNode] = []
    for node in descendants(owner):
        targets: List[cst.CSTNode]
        if isinstance(
            node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Del, cst.For)
        ):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        else:
            continue
        for target in targets:
            found += [
                part
                for part in descendants(target)
                if isinstance(part, cst.Attribute) and part.attr.value == name
            ]
    return found


def _set_first_in(
    init: cst.FunctionDef, name: str
) -> Optional[Tuple[cst.CSTNode, Optional[cst.BaseExpression]]]:
    """The store of ``self.name`` among the top-level statements of
    ``__init__``, and the annotation it gives the attribute: its own, or
    that of the parameter it stores."""
    params = [*init.params.posonly_params, *init.params.params]
    if init.decorators or not params or not isinstance(init.body, cst.IndentedBlock):
        return None
    me = params[0].name.value
    for line in init.body.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        small = line.body[0]
        if isinstance(small, cst.AnnAssign) and _is_member(small.target, me, name):
            return small.target, small.annotation.annotation
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            continue
        target = small.targets[0].target
        if not _is_member(target, me, name):
            continue
        value = small.value
        if not isinstance(value, cst.Name) or not parameter_unchanged(
            init, value.value
        ):
            return target, None
        annotation = next(
            (p.annotation for p in init.params.params if p.name.value == value.value),
            None,
        )
        return target, annotation.annotation if annotation is not None else None
    return None


def _is_member(target: cst.BaseExpression, me: str, name: str) -> bool:
    return (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == me
        and target.attr.value == name
    )


def _class_annotation(
    declared: List[cst.BaseStatement], name: str
) -> Optional[cst.BaseExpression]:
    """``name: T`` alone in the class body (no value: no class attribute)."""
    if len(declared) != 1 or not isinstance(declared[0], cst.SimpleStatementLine):
        return None
    small = declared[0].body[0] if len(declared[0].body) == 1 else None
    if (
        isinstance(small, cst.AnnAssign)
        and small.value is None
        and isinstance(small.target, cst.Name)
        and small.target.value == name
    ):
        return small.annotation.annotation
    return None
