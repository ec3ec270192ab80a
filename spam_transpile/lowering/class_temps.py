"""Where a match statement in a class body keeps its temporaries.

A class body's namespace is whatever its metaclass's ``__prepare__``
returned, and it sees every name stored in it: ``enum``'s makes a member of
each (then ``KeyError`` when it is deleted), others record or forbid
stores. The subject, its shared facts and the like are therefore kept out
of it altogether; the class body declares them:

- ``nonlocal``, where the class is (at any depth of classes) inside a
  function: a variable of that function, one per call, so a class created
  by two threads at once, or again from one of its own guards, keeps its
  own. The function declares it with an annotation (``_spam_subject1:
  object``, which runs nothing), added to one of its simple lines;
- ``global`` otherwise (a class of the module, which runs once per run of
  the module), or where the function has no simple line of its own.

The names are fresh (used nowhere in the module), so the declarations
change nothing else.

A class body reads module names with ``LOAD_NAME``, which cloudpickle does
not count among the globals of a function it copies by value (a class made
inside it): the names the lowering itself adds to the module (the helper,
the readable layout's ABC imports) are declared ``global`` there too
(:func:`globals_to_declare`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, AbstractSet, List, Optional, Sequence

import libcst as cst

from spam_transpile.lowering.helper_lines import is_docstring
from spam_transpile.syntax.codegen import code_for
from spam_transpile.syntax.cstwalk import descendants

if TYPE_CHECKING:
    from spam_transpile.lowering.scope_info import Scope

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def declaration_line(function: cst.FunctionDef) -> Optional[cst.SimpleStatementLine]:
    """The first line of simple statements in ``function``'s own scope (in
    its body or a block of it, not in a nested function or class), where an
    annotation can declare a variable of the function without a line of its
    own; None if it has none."""
    path = _path_to_line(function)
    return None if path is None else path[-1]  # type: ignore[return-value]


def _path_to_line(function: cst.FunctionDef) -> Optional[List[cst.CSTNode]]:
    """The nodes from ``function`` down to its :func:`declaration_line`."""
    todo: List[List[cst.CSTNode]] = [[function, function.body]]
    while todo:
        path = todo.pop(0)
        node = path[-1]
        if isinstance(node, cst.SimpleStatementLine):
            return path
        if isinstance(node, cst.SimpleStatementSuite):
            continue  # ``if x: a; b`` shares the compound statement's line
        if isinstance(node, _NESTED):
            continue
        if isinstance(node, (cst.BaseSuite, cst.BaseCompoundStatement)):
            todo[:0] = [path + inner for inner in _blocks(node)]
    return None


def _blocks(node: cst.CSTNode) -> List[List[cst.CSTNode]]:
    """Paths to the statements and blocks directly inside ``node``, in order
    (through the ``else``, ``except`` and ``finally`` clauses that hold
    them)."""
    if isinstance(node, cst.IndentedBlock):
        return [[statement] for statement in node.body]
    out: List[List[cst.CSTNode]] = []
    for child in node.children:
        if isinstance(child, (cst.BaseSuite, cst.BaseCompoundStatement)):
            out.append([child])
        elif isinstance(
            child,
            (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally),
        ):
            out += [[child] + inner for inner in _blocks(child)]
    return out


def declare_first(function: cst.FunctionDef, names: Sequence[str]) -> cst.FunctionDef:
    """``function`` starting with ``name: object`` for each of ``names``
    (after its docstring), where lines may move (the readable layout)."""
    assert isinstance(function.body, cst.IndentedBlock)
    statements = list(function.body.body)
    at = 1 if statements and is_docstring(statements[0]) else 0
    declarations = [
        cst.SimpleStatementLine(
            body=[
                cst.AnnAssign(
                    target=cst.Name(name),
                    annotation=cst.Annotation(cst.Name("object")),
                    value=None,
                )
            ]
        )
        for name in names
    ]
    statements[at:at] = declarations
    return function.with_changes(body=function.body.with_changes(body=statements))


def declare_locals(function: cst.FunctionDef, names: Sequence[str]) -> cst.FunctionDef:
    """``function`` with ``name: object`` for each of ``names`` at the end of
    its :func:`declaration_line`, where no line may move (a statement after
    a ``return`` is never run, and a docstring stays first).

    The line's ancestors are rebuilt one by one: a visit of the whole
    function would rebuild the generated expressions in it as names."""
    path = _path_to_line(function)
    assert path is not None, "no line to declare them on"
    line = path[-1]
    assert isinstance(line, cst.SimpleStatementLine)
    semicolon = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
    body: List[cst.BaseSmallStatement] = [
        *line.body[:-1],
        line.body[-1].with_changes(semicolon=semicolon),
    ]
    for i, name in enumerate(names):
        body.append(
            cst.AnnAssign(
                target=cst.Name(name),
                annotation=cst.Annotation(cst.Name("object")),
                value=None,
                semicolon=(
                    semicolon if i < len(names) - 1 else cst.MaybeSentinel.DEFAULT
                ),
            )
        )
    new: cst.CSTNode = line.with_changes(body=body)
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:])):
        new = _with_child(parent, child, new)
    assert isinstance(new, cst.FunctionDef)
    return new


def _with_child(parent: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    """``parent`` with its child ``old`` (a field, or an item of one) replaced."""
    for field in dataclasses.fields(parent):
        value = getattr(parent, field.name)
        if value is old:
            return parent.with_changes(**{field.name: new})
        if isinstance(value, (list, tuple)) and any(item is old for item in value):
            items = [new if item is old else item for item in value]
            return parent.with_changes(**{field.name: items})
    raise ValueError(f"{type(old).__name__} is not a child of {type(parent).__name__}")


def declare_globals(
    scopes: Sequence["Scope"], ours: AbstractSet[str], out: List[cst.BaseStatement]
) -> None:
    """``global`` first in ``out``, the statements a match statement became
    in the innermost of ``scopes``, where that is a class body inside a
    function, for the names of ``ours`` (module names the lowering added)
    they read (:func:`globals_to_declare`)."""
    if scopes[-1].kind != "class" or not any(s.kind == "function" for s in scopes):
        return
    read = globals_to_declare(scopes[-1], ours, "".join(code_for(s) for s in out))
    if not read:
        return
    first = out[0]
    assert isinstance(first, (cst.SimpleStatementLine, cst.If))
    declaration = cst.parse_statement(f"global {', '.join(read)}\n")
    out[0] = declaration.with_changes(leading_lines=first.leading_lines)
    out.insert(1, first.with_changes(leading_lines=[]))


def globals_to_declare(scope: "Scope", ours: AbstractSet[str], code: str) -> List[str]:
    """Which of ``ours`` (module names the lowering added) the class body
    ``scope`` is to declare ``global`` for ``code``, the statements a match
    statement became there: those it reads and has not declared yet, but
    a name the class body reads itself (``global`` after a use does not
    compile). Noted as declared."""
    # the code holds the lowering's own text: a name it chose is one no
    # user name shadows, so a mention is a read
    read = {name for name in ours if re.search(rf"(?<![\w.]){name}\b", code)}
    read -= scope.globals_declared
    if read and scope.node is not None:
        read -= {
            node.value for node in descendants(scope.node) if isinstance(node, cst.Name)
        }
    scope.globals_declared |= read
    return sorted(read)
