"""The pure core: ``transpile(source) -> source``, tables of inputs and outcomes."""

from __future__ import annotations

import ast
import sys

import pytest

from spam_transpile import TranspileError, transpile
from spam_transpile.settings import Target


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("", id="empty"),
        pytest.param("x = 1\n", id="no-match"),
        pytest.param("match = 1\nmatch(x)\nmatch[x]\ncase.x = 2\n", id="soft-keywords"),
        pytest.param("import re\nm = re.match('a', 'a')\n", id="re-match"),
        pytest.param("def f():\n    return match\n", id="match-as-name"),
        pytest.param("x = 1\r\ny = 2\r\n", id="crlf"),
        pytest.param("\ufeffx = 1\n", id="bom"),
        pytest.param("# -*- coding: latin-1 -*-\nx = 'é'\n", id="coding-cookie"),
        pytest.param("x = 1", id="no-final-newline"),
    ],
)
def test_source_without_match_statements_is_returned_unchanged(source: str) -> None:
    assert transpile(source) == source


def _lines(text: str) -> list:
    return text.splitlines(keepends=True)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            "def f(x):\n    match x:\n        case 1:\n            return 1\n",
            id="simple",
        ),
        pytest.param(
            "def f(x):\n    match (\n        x\n    ):\n        case 1:\n            return 1\n",
            id="multi-line-subject",
        ),
        pytest.param(
            "def f(x):\n    match x:\n        case (1 |\n              2 |\n              3):\n"
            "            return 1\n",
            id="multi-line-pattern",
        ),
        pytest.param(
            "def f(x):\n    match x:\n        case y if (y >\n                   0):\n"
            "            return 1\n",
            id="multi-line-guard",
        ),
        pytest.param(
            "match x:\n    case 1: pass\n    case 2: pass  # two\n",
            id="one-line-bodies",
        ),
        pytest.param(
            "match x:\n    case 1:\n        pass\n    # trailing\n\ny = 1\n",
            id="comment-after-last-case",
        ),
        pytest.param(
            "match x:\n    case 1:\n        pass\n    # trailing\n",
            id="comment-at-end-of-file",
        ),
        pytest.param(
            "match \\\n    x:\n    case 1:\n        pass\n", id="backslash-continuation"
        ),
    ],
)
def test_every_line_keeps_its_number(source: str) -> None:
    out = transpile(source)
    assert len(_lines(out)) == len(_lines(source))
    tree = ast.parse(out)
    assert not any(isinstance(node, ast.Match) for node in ast.walk(tree))
    compile(out, "<out>", "exec")


def test_bodies_are_kept_byte_for_byte() -> None:
    source = (
        "def f(x):\n"
        "    match x:\n"
        "        case [a, *_]:\n"
        "            if a:   # odd  spacing kept\n"
        "                return  'quoted'\n"
        "        case _:\n"
        "            pass\n"
    )
    out = _lines(transpile(source))
    src = _lines(source)
    for number in (3, 4, 6):
        assert out[number] == src[number]


def test_rest_of_file_is_byte_identical() -> None:
    head = "import os  # keep\n\n\n'''doc'''\n"
    tail = "\n\nx = [ 1,2 ]   # spacing\n"
    source = head + "match x:\n    case 1:\n        pass\n" + tail
    out = transpile(source)
    assert out.startswith(head) and out.endswith(tail)


def test_crlf_line_endings_are_kept() -> None:
    source = (
        "match x:\r\n    case 1:\r\n        pass\r\n    case _:\r\n        pass\r\n"
    )
    out = transpile(source)
    assert out.count("\r\n") == source.count("\r\n")
    assert "\n" not in out.replace("\r\n", "")


def test_temporaries_never_collide_with_user_names() -> None:
    source = (
        "_spam_subject1 = 'user'\n"
        "def f(x):\n"
        "    match x.y:\n"
        "        case [a, b]:\n"
        "            return _spam_subject1\n"
    )
    out = transpile(source)
    assert "_spam_subject1 = x.y" not in out
    # the helper goes before the module's first statement, on its line
    assert out.splitlines()[0].endswith("; _spam_subject1 = 'user'")


def test_shadowed_builtins_are_reached_through_the_builtins_module() -> None:
    source = (
        "def f(type, len):\n    match type:\n        case [a]:\n            return a\n"
    )
    out = transpile(source)
    assert "__import__('builtins').len(" in out
    test = next(line for line in out.splitlines() if line.startswith("    if "))
    assert " len(" not in test.replace("builtins').len(", "")


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        pytest.param("x = (\n", 2, 1, id="unclosed-paren"),
        pytest.param("match x:\n    case 1 2:\n        pass\n", 2, 1, id="bad-pattern"),
        pytest.param("def f(:\n    pass\n", 1, 7, id="bad-def"),
    ],
)
def test_invalid_source_raises_transpile_error(
    source: str, line: int, column: int
) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(source, filename="bad.py")
    error = info.value
    assert isinstance(error, SyntaxError)
    assert error.filename == "bad.py"
    assert error.lineno >= 1 and error.offset >= 1
    assert error.format().startswith("bad.py:")


@pytest.mark.parametrize("target", ["3.6", "3.7"])
def test_user_assignment_expressions_are_refused_below_38(target: str) -> None:
    source = "def f(x):\n    match x:\n        case 1 if (y := 2):\n            pass\n"
    with pytest.raises(
        TranspileError, match="assignment expressions need Python 3.8"
    ) as info:
        transpile(source, target=target)
    assert (info.value.lineno, info.value.offset) == (3, 20)


_GUARDED = (
    "def f(v):\n    match v:\n        case [a, *rest] if a:\n            return a\n"
)


@pytest.mark.parametrize("target", ["3.6", "3.7"])
def test_captures_a_guard_reads_become_annotated_locals_below_38(target: str) -> None:
    out = transpile(_GUARDED, target=target)
    assert out.splitlines()[1].endswith("; a: object; rest: object")
    assert ":=" not in out


@pytest.mark.parametrize("target", ["3.6", "3.7"])
def test_a_case_stores_its_captures_with_one_call_below_38(target: str) -> None:
    out = transpile(_GUARDED, target=target)
    assert out.splitlines()[2].endswith(
        " and [_spam.store(lambda: (a, rest), a=v[0], rest=_spam.items(v, 1, 0))]"
        " and a:"
    )


@pytest.mark.parametrize("target", ["3.6", "3.7"])
def test_a_case_without_guard_binds_its_captures_in_its_body_below_38(
    target: str,
) -> None:
    source = (
        "def f(v):\n"
        "    match v:\n"
        "        case [a, *rest]:\n"
        "            return a\n"
        "        case {'k': k}: return k\n"
        "        case (x, y):\n"
        "            for i in y:\n"
        "                pass\n"
        "            return x\n"
    )
    lines = transpile(source, target=target).splitlines()
    # only the captures the tests store need declaring
    assert lines[1].endswith("; x: object; y: object")
    assert lines[3] == "            a = v[0]; rest = _spam.items(v, 1, 0); return a"
    assert lines[4].endswith(""": k = v.get('k'); return k""")
    # a body starting with ``for`` has no line to bind on: the test stores
    assert lines[5].endswith("[_spam.store(lambda: (x, y), x=v[0], y=v[1])]:")
    assert ":=" not in "\n".join(lines)


def test_names_a_store_call_cannot_take_are_stored_alone() -> None:
    # ``__x``'s cell is ``_C__x`` (its keyword would be ``__x``); ``g`` is
    # the module's.
    source = (
        "class C:\n"
        "    def m(self, v):\n"
        "        global g\n"
        "        match v:\n"
        "            case [__x, g, y, z] if z:\n"
        "                return __x\n"
    )
    test = transpile(source, target="3.7").splitlines()[4]
    assert (
        "[setattr((lambda: __x).__closure__[0], 'cell_contents', v[0]), "
        "globals().__setitem__('g', v[1]), "
        "_spam.store(lambda: (y, z), y=v[2], z=v[3])]"
    ) in test


def test_a_value_reading_a_name_of_the_call_starts_another_call() -> None:
    from spam_transpile.lowering import emit
    from spam_transpile.lowering.names import Names

    binder = emit.cell_binder(
        Names(frozenset(), frozenset()),
        Target(3, 7),
        frozenset(),
        lambda name: name,
        "_spam.store",
    )
    assert binder.store_all is not None
    # ``d`` reads ``m`` as stored by the call before; a name stored twice
    # (never by one case: CPython refuses that) would be a repeated keyword.
    pairs = [("m", "v.get('k')"), ("d", "m"), ("e", "v.m"), ("d", "v[0]")]
    assert binder.store_all(pairs) == [
        "_spam.store(lambda: m, m=v.get('k'))",
        "_spam.store(lambda: (d, e), d=m, e=v.m)",
        "_spam.store(lambda: d, d=v[0])",
    ]


_CELL_STORES = """\
import sys


def outer(v):
    def show():
        return (f, values, n)

    match v:
        case [f, *values] if f:
            pass
        case {"n": n, "f": f, **values}:
            pass
        case _:
            f, values, n = 0, [], 0
    return show()


class C:
    def m(self, v):
        match v:
            case (__p, q):
                return __p, q, sorted(locals())


def deep(v):
    match v:
        case [[a, b], [c, [d, e]], *rest] if a + e:
            return a, b, c, d, e, rest
    return None


for v in ([1, 2, 3], [0, 5], {"n": 7, "f": 8, "z": 9}, "x"):
    try:
        print(outer(v))
    except NameError as error:
        print("NameError", type(error).__name__)
print(C().m((1, 2)))
print(deep([[1, 2], [3, [4, 5]], 6, 7]), deep([[0, 2], [3, [4, 0]]]))
"""


@pytest.mark.slow
def test_cell_stores_run_like_native_below_38(tmp_path) -> None:
    from tests.like_native import assert_runs_like_native

    for target in ("3.6", "3.7"):
        out = transpile(_CELL_STORES, target=target)
        assert "_spam.store(lambda: (f, values), f=v[0]" in out
        assert_runs_like_native(_CELL_STORES, out, tmp_path, versions=(target,))
        # The readable layout stores a guarded case's captures the same way.
        out = transpile(_CELL_STORES, target=target, layout="readable")
        assert_runs_like_native(_CELL_STORES, out, tmp_path, versions=(target,))


def test_unknown_target_is_an_error() -> None:
    with pytest.raises(TranspileError, match="unknown target"):
        transpile("x = 1\n", target="2.7")


@pytest.mark.parametrize("target", ["3.6", "3.7", "3.8", "3.9"])
def test_output_uses_only_target_syntax(target: str) -> None:
    # The tool's own interpreter (3.9+) can check the 3.8 grammar through ast.
    import ast

    source = "match x:\n    case [a, *r] if a:\n        pass\n    case {'k': v, **kw}:\n        pass\n"
    out = transpile(source, target=target)
    major, minor = map(int, target.split("."))
    ast.parse(out, feature_version=(major, minor))


def test_helper_is_spread_over_free_lines_within_the_line_limit() -> None:
    """The helper's pieces go one or more per free line before the module's
    first statement, each line at most LINE_LIMIT characters long; the lines
    after that statement get nothing, since it may run code."""
    from spam_transpile.lowering.helper_lines import LINE_LIMIT

    free = "".join(f"# note {i}\n\n" for i in range(6))
    source = (
        '"""Docstring."""\n'
        + free
        + "".join(f"A{i} = {i}\n\n" for i in range(12))
        + "def f(s):\n"
        + "    match s:\n"
        + "        case [1, *rest]:\n"
        + "            return rest\n"
        + "        case {'k': int(v), **more}:\n"
        + "            return v, more\n"
        + "        case Q(a=1):\n"
        + "            return 'q'\n"
    )
    out = transpile(source)
    lines = out.splitlines()
    assert len(lines) == len(source.splitlines())
    assert max(len(line) for line in lines) <= LINE_LIMIT
    holders = [i for i, line in enumerate(lines) if "_spam" in line]
    first_statement = lines.index("A0 = 0") if "A0 = 0" in lines else -1
    assert len([i for i in holders if i <= 12]) >= 3
    assert not [i for i in holders if 13 <= i < 37]  # none after A0's line
    assert first_statement == -1 or holders[0] < first_statement
    assert "# note 0" in out  # comments stay, after the code put before them
    namespace: dict = {"Q": type("Q", (), {"a": 1})}
    exec(compile(out, "<helper>", "exec"), namespace)
    assert namespace["f"]([1, 2]) == [2]
    assert namespace["f"]({"k": 3, "x": 4}) == (3, {"x": 4})


def test_helper_is_compiled_once_per_process_and_shared() -> None:
    source = "def f(v):\n    match v:\n        case [x]:\n            return x\n"
    namespaces = []
    for name in ("first_module", "second_module"):
        namespace: dict = {"__name__": name}
        exec(compile(transpile(source), name, "exec"), namespace)
        assert namespace["f"]([7]) == 7  # binds the helper on the match line
        namespaces.append(namespace)
    first, second = (n["_spam"] for n in namespaces)
    assert first is second
    # kept in sys.modules under a key of its own, never under its __name__,
    # so that cloudpickle copies it instead of importing it
    assert any(module is first for module in sys.modules.values())
    assert first.__name__ not in sys.modules
