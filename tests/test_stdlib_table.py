"""spam_transpile.lowering.stdlib_table and exact_stdlib_class: the
keep-lines layout knows a standard library class only as every CPython
from the target on binds it, read from the interpreters themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from interpreters import require_interpreter
from like_native import assert_runs_like_native
from script_loader import SCRIPTS, load_script
from spam_transpile import transpile
from spam_transpile.lowering import stdlib_table
from spam_transpile.lowering.facts import KnownClass
from spam_transpile.lowering.stdlib_classes import _exact_class

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "fixtures" / "stdlib_classes" / "table_classes.py"
# ``type_params`` joined them in 3.12
CLASS_DEF = ("name", "bases", "keywords", "body", "decorator_list")


@pytest.mark.slow
def test_the_table_is_what_every_interpreter_says() -> None:
    generator = load_script(SCRIPTS / "gen_stdlib_table.py", "gen_stdlib_table")
    interpreters = {v: require_interpreter(v) for v in generator.VERSIONS}
    fresh = generator.render(generator.collect(interpreters), generator.VERSIONS)
    table = Path(stdlib_table.__file__).read_text(encoding="utf-8")
    assert table == fresh, "run scripts/gen_stdlib_table.py"


@pytest.mark.parametrize(
    "key, oldest, expected",
    [
        ("ast.BinOp", 6, KnownClass(("left", "op", "right"))),
        # ``kind`` joined ``value`` in 3.8: before, only ``value`` is shared
        ("ast.Constant", 7, KnownClass(("value",))),
        ("ast.Constant", 8, KnownClass(("value", "kind"))),
        # ``type_params`` joined in 3.12
        ("ast.Lambda", 9, KnownClass(("args", "body"))),
        ("ast.ClassDef", 11, KnownClass(CLASS_DEF)),
        ("ast.Num", 8, None),  # gone in 3.12: a later interpreter has no class
        ("collections.Sequence", 6, None),  # gone in 3.10
        ("re.Pattern", 6, None),  # not public before 3.7
        ("re.Pattern", 7, KnownClass(())),
        ("collections.OrderedDict", 9, KnownClass(None)),  # a dict: matches itself
        ("ast.NoSuchClass", 9, None),
    ],
)
def test_a_class_is_known_as_every_interpreter_from_the_target_on_has_it(
    key: str, oldest: int, expected: object
) -> None:
    assert _exact_class(key, oldest) == expected


def _lowered(source: str, target: str = "3.9") -> str:
    return transpile(source, target=target)


CONSTANT = """\
import ast
def f(node):
    match node:
        case ast.Constant(value, kind):
            return (value, kind)
        case ast.Constant(value):
            return value
"""


def test_more_positional_sub_patterns_than_all_targets_take_use_the_helper() -> None:
    before = _lowered(CONSTANT, "3.7").split("case", 1)[0]
    assert "_spam.attrs(node, ast.Constant, 2, ())" in before
    assert "(value := getattr(node, 'value'" not in before  # no walrus on 3.7
    assert "isinstance(node, ast.Constant) and getattr(node, 'value'" in before
    since = _lowered(CONSTANT, "3.8")
    assert "_spam.attrs(" not in since and "_spam.cls(" not in since
    assert "(kind := getattr(node, 'kind', _spam.MISSING))" in since


@pytest.mark.parametrize(
    "setting",
    [
        "BinOp.__match_args__ = ('right', 'op', 'left')",
        "setattr(BinOp, '__match_args__', ('right', 'op', 'left'))",
        "ast.BinOp.__match_args__ = ('right', 'op', 'left')",
    ],
)
def test_a_module_that_sets_match_args_keeps_the_check(
    setting: str, tmp_path: Path
) -> None:
    source = (
        "import ast\n"
        "from ast import BinOp\n"
        f"{setting}\n"
        "def f(node):\n"
        "    match node:\n"
        "        case BinOp(first, _, last):\n"
        "            return (type(first).__name__, type(last).__name__)\n"
        "print(f(ast.BinOp(ast.Constant(1), ast.Add(), ast.Name('x', ast.Load()))))\n"
    )
    out = _lowered(source)
    assert "_spam.attrs(node, BinOp, 3, ())" in out
    assert_runs_like_native(source, out, tmp_path, ("3.9",))


def test_a_name_bound_twice_is_not_looked_up() -> None:
    source = CONSTANT.replace("import ast\n", "import ast\nif 0:\n    ast = None\n")
    assert "_spam.cls(ast.Constant)" in _lowered(source)


@pytest.mark.slow
@pytest.mark.parametrize(
    "target, versions",
    [("3.6", ("3.6", "3.7")), ("3.8", ("3.8",)), ("3.9", ("3.9", "3.13"))],
)
def test_table_classes_run_as_native_match(
    target: str, versions: tuple, tmp_path: Path
) -> None:
    source = PROGRAM.read_text("utf-8")
    out = transpile(source, target=target)
    # only the class that is not in the table is checked as it runs
    assert out.count("_spam.cls(") == 1 and "_spam.cls(Pattern)" in out
    assert_runs_like_native(source, out, tmp_path, versions)
