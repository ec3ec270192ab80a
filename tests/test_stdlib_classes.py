"""spam_transpile.lowering.stdlib_classes: the readable layout trusts a
class of the standard library to be a class (no ``_spam.cls()``), as a
reviewer does; the keep-lines layout only where every CPython from the
target on binds the name to a class (stdlib_table)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from like_native import assert_runs_like_native
from type_check import assert_mypy_clean
from spam_transpile import transpile
from spam_transpile.lowering.stdlib_classes import is_stdlib_class

SOURCE = """\
import ast
import typing
import enum as E
import os.path
from fractions import Fraction
from collections import OrderedDict as OD


def kind(x):
    match x:
        case ast.BinOp(op=ast.Add()):
            return "add"
        case ast.BinOp(left, ast.Sub(), right):
            return ("sub", isinstance(left, ast.Name), isinstance(right, ast.expr))
        case Fraction(numerator=n, denominator=1):
            return ("whole", n)
        case OD():
            return "ordered"
        case E.Enum():
            return "enum"
        case _:
            return "other"


class Colour(E.Enum):
    RED = 1


for value in [
    ast.parse("a + b", mode="eval").body,
    ast.parse("a - 1", mode="eval").body,
    ast.parse("a * b", mode="eval").body,
    Fraction(4, 1),
    Fraction(1, 3),
    OD(),
    Colour.RED,
    None,
]:
    print(kind(value))
"""


def _readable(source: str) -> str:
    return transpile(source, layout="readable")


def test_standard_library_classes_are_not_checked_in_the_readable_layout() -> None:
    out = _readable(SOURCE)
    assert "_spam.cls(" not in out
    for spelled in ["ast.BinOp", "Fraction", "OD", "E.Enum"]:
        assert f"isinstance(x, {spelled})" in out


def test_the_keep_lines_layout_trusts_the_classes_of_its_table() -> None:
    out = transpile(SOURCE)
    assert "_spam.cls(" not in out and "_spam.attrs(" not in out
    for spelled in ["ast.BinOp", "Fraction", "OD", "E.Enum"]:
        assert f"isinstance(x, {spelled})" in out
    assert "(left := getattr(x, 'left', _spam.MISSING))" in out


def test_the_keep_lines_layout_checks_a_class_it_does_not_know() -> None:
    program = SOURCE.replace("import enum as E", "E = __import__('enum')")
    out = transpile(program)
    assert "E.Enum if isinstance(E.Enum, type) else _spam.cls(E.Enum)" in out


@pytest.mark.parametrize(
    "source, expression",
    [
        ("import typing", "typing.List"),  # not a class: a generic alias
        ("import ast", "ast.NoSuchClass"),
        ("import ast\nast = None", "ast.BinOp"),  # bound twice
        ("import os.path", "os.path.PurePath"),  # ``os`` is bound, not os.path
        ("import this", "this.Anything"),  # never imported by the tool
        ("def f(): pass", "Local"),  # not imported
    ],
)
def test_anything_else_keeps_its_check(source: str, expression: str) -> None:
    program = f"{source}\ndef f(x):\n    match x:\n        case {expression}():\n            return 1\n"
    assert f"_spam.cls({expression})" in _readable(program)


@pytest.mark.parametrize(
    "source, expression",
    [
        ("import mypackage", "mypackage.Order"),  # another project's module
        ("from .ast import BinOp", "BinOp"),  # a module of the program
        ("from requests import Response", "Response"),
    ],
)
def test_a_class_a_module_imports_from_elsewhere_is_trusted(
    source: str, expression: str
) -> None:
    # as a reviewer reads ``from requests import Response`` (README, Known
    # limits); the keep-lines layout keeps CPython's check
    program = f"{source}\ndef f(x):\n    match x:\n        case {expression}():\n            return 1\n"
    assert f"isinstance(x, {expression})" in _readable(program)
    assert "_spam" not in _readable(program)
    assert "_spam.cls(" in transpile(program)


def test_only_dotted_names_and_imported_names_are_looked_up() -> None:
    imports = {"ast": "ast"}
    assert is_stdlib_class(imports, {}, cst.parse_expression("ast.BinOp"))
    assert not is_stdlib_class(imports, {}, cst.parse_expression("ast.BinOp.x"))
    assert not is_stdlib_class(imports, {}, cst.parse_expression("BinOp"))
    assert is_stdlib_class({}, {"B": ("ast", "BinOp")}, cst.parse_expression("B"))


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_readable_output_runs_as_native_match(target: str, tmp_path: Path) -> None:
    out = transpile(SOURCE, target=target, layout="readable")
    assert_runs_like_native(SOURCE, out, tmp_path, (target,))


def test_alternatives_that_choose_a_capture_trust_their_classes(
    tmp_path: Path,
) -> None:
    # The capture's value is chosen by testing the alternatives again: the
    # enclosing ``if`` narrows ``node`` to either class, and the choice's
    # own test narrows it to one, so a type checker follows without help.
    program = (
        "import ast\n"
        "def f(node: ast.AST) -> list:\n"
        "    match node:\n"
        "        case ast.BoolOp(values=items) | ast.List(elts=items):\n"
        "            return items\n"
        "        case ast.Tuple() | ast.Set():\n"
        "            return []\n"
        "    return []\n"
    )
    out = _readable(program)
    assert "_spam" not in out
    assert "if isinstance(node, (ast.BoolOp, ast.List)):" in out
    assert "items = node.values if isinstance(node, ast.BoolOp) else node.elts" in out
    assert "isinstance(node, (ast.Tuple, ast.Set))" in out
    assert_mypy_clean(out, tmp_path)


def test_alternatives_a_type_checker_cannot_follow_store_as_they_match(
    tmp_path: Path,
) -> None:
    # ``x.targets[0] if isinstance(x, Assign) and len(...) == 1 else
    # x.target``: the else does not narrow ``x`` to AugAssign. In an
    # annotated function the values are stored as each alternative
    # matches; unannotated, the choice reads as a person writes it.
    # (a body too long to write once per alternative: split_alternatives)
    program = (
        "import ast\n"
        "def f(node: ast.AST) -> list:\n"
        "    match node:\n"
        "        case ast.Assign(targets=[t], value=v) | ast.AugAssign(t, _, v):\n"
        "            print(t)\n"
        "            print(v)\n"
        "            return [t, v]\n"
        "    return []\n"
        "def g(node):\n"
        "    match node:\n"
        "        case ast.Assign(targets=[t], value=v) | ast.AugAssign(t, _, v):\n"
        "            print(t)\n"
        "            print(v)\n"
        "            return [t, v]\n"
        "def h(node: ast.AST) -> list:\n"
        "    match node:\n"
        "        case ast.Assign(targets=[t], value=v) | ast.AugAssign(t, _, v):\n"
        "            return [t, v]\n"
        "    return []\n"
    )
    out = _readable(program)
    f, g = out[: out.index("def g")], out[out.index("def g") : out.index("def h")]
    assert "[t := node.targets[0], v := node.value]" in f
    assert (
        "isinstance(node, ast.AugAssign) and [t := node.target, v := node.value]" in f
    )
    assert ":=" not in g and "v = node.value\n" in g
    # a short body is written once per alternative, which a type checker
    # follows as it follows any chain
    h = out[out.index("def h") :]
    assert ":=" not in h
    assert "    elif isinstance(node, ast.AugAssign):\n        t, v = node.target" in h
    assert "_spam" not in out
    assert_mypy_clean(out, tmp_path)
