"""Hostile but valid (or precisely invalid) input: issue 10, parse layer.

Each test here failed before the fix it guards: line endings CPython takes
and LibCST does not, layout LibCST refuses, lone surrogates, patterns that
make LibCST's parser exponential, flat code refused as "too deeply nested",
compiler-stage errors passed through, and syntax newer than the target.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List, Tuple

import pytest

from spam_transpile import TranspileError, transpile
from spam_transpile.syntax.parse import PATTERN_NESTING_LIMIT
from tests.interpreters import require_interpreter

REPO = Path(__file__).resolve().parent.parent
MATCH = "match x:\n    case 1:\n        pass\n"
_LINE_END = re.compile(r"(\r\n|\r|\n)")


def _endings(text: str) -> List[str]:
    return _LINE_END.findall(text)


def _lines(text: str) -> List[str]:
    return _LINE_END.split(text)[0::2]


def _assert_lowered(source: str, output: str) -> None:
    """Lowered, every line kept with its own ending, and compilable."""
    assert output != source
    assert "match x" not in output
    assert _endings(output) == _endings(source)
    compile(output, "<out>", "exec", dont_inherit=True)


# -- 1. line endings ------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            "x = 1\rmatch x:\n    case 1:\n        pass\n", id="cr-before-match"
        ),
        pytest.param("match x:\r    case 1:\n        pass\n", id="cr-after-match"),
        pytest.param("x = 1\rmatch x:\r    case 1:\r        pass\r", id="cr-only"),
        pytest.param(
            "x = 1\r\nmatch x:\r    case 1:\n        pass\r\ny = 2\r", id="mixed"
        ),
        pytest.param(
            "def f(x):\r    match x:\r        case [a]:\r            return a\r",
            id="cr-in-function",
        ),
        pytest.param(
            "match x:\r    case 1:\r\\\n        pass\n", id="cr-then-emptied-line"
        ),
    ],
)
def test_cr_line_endings_are_lowered_and_kept(source: str) -> None:
    output = transpile(source)
    _assert_lowered(source, output)
    # Untouched lines keep their text too.
    assert _lines(output)[0] == _lines(source)[0] or "match" in _lines(source)[0]


def test_untouched_lines_keep_their_cr_line_endings_byte_for_byte() -> None:
    head, tail = "import os\r# c\r\n\r", "y = [ 1 ]\r"
    source = head + "match x:\r    case 1:\r        pass\r" + tail
    output = transpile(source)
    assert output.startswith(head) and output.endswith(tail)


# -- 2. layout LibCST refuses, and lone surrogates ------------------------------


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("\\\nprint(1)\n" + MATCH, id="backslash-line-at-top"),
        pytest.param("x = 1\n\\\n" + MATCH, id="backslash-line-before-match"),
        pytest.param(
            "match x:\n    case 1:\n\\\n        pass\n", id="backslash-line-in-body"
        ),
        pytest.param(
            "match x:\n    case 1:\n        y = 1\n        \\\n        pass\n",
            id="indented-backslash-line-in-body",
        ),
        pytest.param(
            "match x:\n    case 1:\n        \\\n        match y:\n"
            "            case 2:\n                pass\n",
            id="backslash-line-before-nested-match",
        ),
        pytest.param(
            "match x:\n    case 1:\n        match y:\n            \\\n"
            "            case 2:\n                pass\n",
            id="backslash-line-inside-nested-match",
        ),
        pytest.param("match x:\n\x0c    case 1:\n        pass\n", id="ff-before-case"),
        pytest.param("match x:\n    case 1:\n\x0c        pass\n", id="ff-in-body"),
        pytest.param("\x0cmatch x:\n    case 1:\n        pass\n", id="ff-before-match"),
        pytest.param(
            "if 1:\n  \x0c  match x:\n    \x0c    case 1:\n            pass\n",
            id="ff-inside-indentation",
        ),
    ],
)
def test_valid_layouts_are_lowered(source: str) -> None:
    _assert_lowered(source, transpile(source))


@pytest.mark.parametrize(
    "tail",
    ["\n  \n", "\n\t\n\x0c\n", "\n   ", "\r\r  \r", "\r\n \r\n"],
    ids=["blank-then-spaces", "tab-and-form-feed", "no-final-newline", "cr", "crlf"],
)
def test_blank_lines_with_whitespace_ending_the_file_are_kept(tail: str) -> None:
    """LibCST loses a blank line before a last line of spaces (found by the
    mutation fuzzer as 'internal error: the output would not keep line
    numbers'); the file's last lines come back byte for byte."""
    ending = "\r\n" if tail.startswith("\r\n") else tail[0]
    source = MATCH.replace("\n", ending) + tail
    output = transpile(source)
    _assert_lowered(source, output)
    assert output.endswith(tail)


def test_backslash_lines_outside_match_statements_are_kept() -> None:
    source = "\\\nprint(1)\n" + MATCH + "y = 1\n\\\ny = 2\n"
    output = transpile(source)
    assert output.startswith("\\\nprint(1)\n")
    assert output.endswith("y = 1\n\\\ny = 2\n")


def test_backslash_lines_3_9_would_read_otherwise_are_made_blank() -> None:
    # 3.9 reads the line after a backslash-only line as part of the block
    # before it: ``y = 2`` would run inside the case body.
    source = MATCH + "\\\ny = 2\n"
    assert _lines(transpile(source))[3] == ""


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    ["\t        y = 'a tab, then spaces'", "        \ty = 'spaces, then a tab'"],
    ids=["tab-then-spaces", "spaces-then-tab"],
)
def test_indentation_mixing_tabs_and_spaces_as_cpython_allows(
    body: str, tmp_path: Path
) -> None:
    """LibCST matches indentation as text, CPython by column: a case body
    indented with a tab and spaces under a case indented with eight spaces
    is valid Python that LibCST refuses. The lowering reads it with the
    indentation in spaces; the lines it did not rewrite keep their own."""
    from tests.like_native import assert_runs_like_native  # (subprocesses import us)

    source = (
        "def f(x):\n    y = None\n    match x:\n        case 1:\n"
        f"{body}\n        case _:\n            y = 'other'\n    return y\n"
        "print(f(1), f(2))\n"
    )
    compile(source, "<source>", "exec", dont_inherit=True)  # valid for CPython
    output = transpile(source)
    _assert_lowered(source, output)
    assert output.splitlines()[4] == body  # kept as written
    assert_runs_like_native(source, output, tmp_path, ("3.8", "3.9"))


def test_an_error_in_a_file_with_tabs_is_reported_once_and_where_it_is() -> None:
    source = "def f(x):\n\tmatch x:\n\t\tcase y:\n\t\t\tpass\n\t\tcase 1:\n\t\t\tpass\n"
    with pytest.raises(TranspileError) as caught:
        transpile(source, filename="t.py")
    assert str(caught.value).startswith("t.py:3:")
    assert "makes remaining patterns unreachable" in str(caught.value)


def test_a_file_indented_with_tabs_keeps_its_tabs() -> None:
    source = "def f(x):\n\tmatch x:\n\t\tcase 1:\n\t\t\treturn 1\n"
    output = transpile(source)
    indents = [re.match(r"[ \t]*", line).group() for line in output.splitlines()]
    assert indents == ["", "\t", "\t", "\t\t\t"]


def test_string_contents_are_never_normalised() -> None:
    source = 'x = """a\n\\\n\x0c  b"""\n' + MATCH
    output = transpile(source)
    assert output.startswith('x = """a\n\\\n\x0c  b"""\n')


def test_backslash_line_after_a_rewritten_header_runs_on_39() -> None:
    python = require_interpreter("3.9")
    source = "x = 1\nmatch x:\n    case 1:\n\\\n        print('one')\n"
    output = transpile(source)
    result = subprocess.run(
        [python, "-c", output], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, "one\n"), result.stderr


@pytest.mark.parametrize("target", ["3.6", "3.8", "3.9"])
def test_backslash_lines_older_tokenizers_refuse_are_made_blank(target: str) -> None:
    """A backslash-only line that 3.10+ ignores but 3.6-3.8 read with the
    backslash's own indentation (found by the mutation fuzzer in a stdlib
    file); the tokenize module refuses this file, CPython's parser does not."""
    python = require_interpreter(target)
    source = (
        "def f(x):\n"
        "    x = x + 1\n"
        "    \\\n"
        "    y = x\n"
        "\\\n"
        "\n"
        "    # a comment\n"
        "    match y:\n"
        "        case 2:\n"
        "            return 'two'\n"
        "    return 'other'\n"
        "print(f(1), f(5))\n"
    )
    output = transpile(source, target=target)
    assert output.splitlines()[2] == "    \\"  # the same to every CPython: kept
    assert output.splitlines()[4] == ""
    result = subprocess.run(
        [python, "-c", output], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, "two other\n"), result.stderr


def test_form_feed_error_columns_are_the_users() -> None:
    with pytest.raises(TranspileError) as info:
        transpile(
            "match x:\n\x0c    case a:\n        pass\n    case 1:\n        pass\n"
        )
    # CPython 3.12: "name capture 'a' makes remaining patterns unreachable" at
    # 2:11 (the form feed is a column of its own).
    assert (info.value.lineno, info.value.offset) == (2, 11)


@pytest.mark.parametrize(
    ("source", "position"),
    [
        pytest.param("\ud800", (1, 1), id="alone"),
        pytest.param('x = 1\ny = "\udc80"\n' + MATCH, (2, 6), id="in-a-string"),
        pytest.param("x = 1\r  \ud800\n", (2, 3), id="after-cr"),
    ],
)
def test_lone_surrogates_are_positioned_errors(
    source: str, position: Tuple[int, int]
) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(source, filename="s.py")
    assert (info.value.lineno, info.value.offset) == position
    assert "surrogates not allowed" in info.value.msg
    assert info.value.format().startswith(f"s.py:{position[0]}:{position[1]}: error:")


# -- 3. pattern nesting ----------------------------------------------------------


def _nest(kind: str, depth: int) -> str:
    pattern = "2" if kind == "or" else "x"  # alternatives bind the same names
    for level in range(depth):
        pattern = {
            "tuple": "({},)",
            "group": "({})",
            "list": "[{}]",
            "mapping": "{{'k': {}}}",
            "class": "C({})",
            "class-keyword": "C(a={})",
            "or": "(1 | {})",
            "as": "({} as y%d)" % level,
            "star": "[*_, {}]",
            "open-tuple-in-list": "[1, {}]",
        }[kind].format(pattern)
    return pattern


# The lowering repeats the access path of a pattern after a star
# (``s[len(s) - 1]`` with ``s`` itself such a path), so its output doubles per
# level of ``[*_, [*_, ...]]``: 14 s at 16 levels. Not a parse-layer matter;
# reported to the lowering's owner.
STAR_NOTE = "nested star patterns: lowering output doubles per level"

KINDS = [
    "tuple",
    "group",
    "list",
    "mapping",
    "class",
    "class-keyword",
    "or",
    "as",
    "star",
    "open-tuple-in-list",
]

# Depths 1-100 of every kind in one subprocess: each must be lowered or
# refused with the limit named, all within the subprocess timeout (before
# the fix a 15-deep tuple pattern did not finish in 120 s).
_NESTING_RUN = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1])
from tests.test_hostile_input import KINDS, _nest
from spam_transpile import transpile, TranspileError
results = []
for kind in KINDS:
    for depth in list(range(1, 21)) + [25, 30, 40, 50, 75, 100]:
        if kind == "star" and 12 < depth <= 16:
            continue  # see STAR_NOTE
        source = "match v:\n    case " + _nest(kind, depth) + ":\n        pass\n"
        start = time.perf_counter()
        try:
            transpile(source)
            outcome = "lowered"
        except TranspileError as error:
            outcome = error.format()
        results.append([kind, depth, outcome, time.perf_counter() - start])
print(json.dumps(results))
"""


@pytest.mark.slow
def test_nested_patterns_are_lowered_or_refused_quickly() -> None:
    import json

    done = subprocess.run(
        [sys.executable, "-c", _NESTING_RUN, str(REPO)],
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    for kind, depth, outcome, _seconds in results:
        if outcome != "lowered":
            assert "exceeds the limit of 16" in outcome, (kind, depth, outcome)
            assert outcome.startswith("<unknown>:2:"), outcome
    lowered = {
        kind: max(d for k, d, o, _ in results if k == kind and o == "lowered")
        for kind in KINDS
    }
    # Weight 2 per level: at least 8 deep; weight 1: at least 15 (the ``as``
    # kind adds no brackets of its own beyond the group around it).
    assert lowered["tuple"] >= 8 and lowered["mapping"] >= 8
    assert all(lowered[kind] >= 15 for kind in ("group", "list", "class", "or"))
    # Refusals cost no parse: far cheaper than the slowest accepted input.
    slowest_refusal = max(s for k, d, o, s in results if o != "lowered")
    slowest_accepted = max(s for k, d, o, s in results if o == "lowered")
    assert slowest_refusal < max(slowest_accepted, 0.05)


def test_the_nesting_limit_names_itself_and_points_at_the_pattern() -> None:
    source = "x = 1\nmatch x:\n    case " + _nest("tuple", 9) + ":\n        pass\n"
    with pytest.raises(TranspileError) as info:
        transpile(source, filename="deep.py")
    message = info.value.format()
    assert message.startswith("deep.py:3:")
    assert f"limit of {PATTERN_NESTING_LIMIT}" in message


def test_brackets_in_strings_and_comments_do_not_count() -> None:
    pattern = "[" + "'((((((((((((((((((((', " + "]"
    source = (
        "match x:\n    case (  # ((((((((((((((((((((((((\n"
        f"          {pattern}):\n        pass\n"
    )
    _assert_lowered(source, transpile(source))


def test_expressions_outside_patterns_have_no_nesting_limit() -> None:
    deep = "(" * 40 + "1," + "),".join([""] * 40) + ")"
    source = f"y = {deep}\nmatch {deep}:\n    case 1 if {deep}:\n        pass\n"
    _assert_lowered(source, transpile(source))


# -- 4. flat code is not "too deeply nested" -------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            "match x:\n"
            + "".join(f"    case {i}:\n        y = {i}\n" for i in range(2000)),
            id="2000-cases",
        ),
        pytest.param("y = " + "+".join(["1"] * 1500) + "\n" + MATCH, id="1500-terms"),
        pytest.param(
            "".join(f"match x:\n    case {i}:\n        pass\n" for i in range(2000)),
            id="2000-match-statements",
        ),
    ],
)
def test_flat_code_cpython_compiles_is_lowered(source: str) -> None:
    compile(source, "<in>", "exec")  # CPython takes it: so must we
    output = transpile(source)
    assert len(_lines(output)) == len(_lines(source))
    compile(output, "<out>", "exec")


@pytest.mark.slow
def test_recursion_limit_is_restored() -> None:
    before = sys.getrecursionlimit()
    transpile(
        "match x:\n" + "".join(f"    case {i}:\n        pass\n" for i in range(600))
    )
    assert sys.getrecursionlimit() == before


# -- 5. compiler-stage errors ------------------------------------------------------

COMPILER_ERRORS = [
    "return 1\n",
    "yield 1\n",
    "x = yield\n",
    "await f()\n",
    "break\n",
    "continue\n",
    "for x in y:\n    pass\nelse:\n    break\n",
    "def f(a, a):\n    pass\n",
    "lambda a, a: 0\n",
    "def f(a, *, a):\n    pass\n",
    "nonlocal x\n",
    "def f():\n    nonlocal x\n",
    "import os\nfrom __future__ import annotations\n",
    "from __future__ import nested_scopes, braces\n",
    "from __future__ import spam\n",
    "def f():\n    from os import *\n",
    "def f(x):\n    global x\n",
    "def f():\n    x = 1\n    global x\n",
    "def f():\n    print(x)\n    global x\n",
    "def f():\n    x: int\n    global x\n",
    "x: int = 1\ndef f():\n    global x\n    x: int = 2\n",
    "class C:\n    return 1\n",
    "class C:\n    yield 1\n",
    "def f():\n    class C:\n        nonlocal x\n",
    "async def f():\n    yield 1\n    return 2\n",
    "def f():\n    [(yield x) for x in y]\n",
    "def f():\n    [await x for x in y]\n",
    "async def f():\n    def g():\n        await x\n",
    "*a = b\n",
    "a, *b, *c = d\n",
    "def f():\n    x = 1\n    def g():\n        nonlocal x\n        global x\n",
    "[i := 0 for i in range(3)]\n",
]


@pytest.mark.skipif(sys.version_info < (3, 10), reason="compile() must know match")
@pytest.mark.parametrize("snippet", COMPILER_ERRORS)
@pytest.mark.parametrize("where", ["before", "after"])
def test_compiler_stage_errors_are_cpythons(snippet: str, where: str) -> None:
    source = snippet + MATCH if where == "before" else MATCH + snippet
    try:
        compile(source, "c.py", "exec", dont_inherit=True)
    except SyntaxError as expected:
        with pytest.raises(TranspileError) as info:
            transpile(source, filename="c.py")
        got = info.value
        assert (got.msg, got.lineno, got.offset) == (
            expected.msg,
            expected.lineno,
            expected.offset,
        )
        assert got.format().startswith(f"c.py:{expected.lineno}:")
    else:
        pytest.fail("CPython compiles it: not a compiler-stage error")


def test_pattern_rule_errors_still_win_with_312_positions() -> None:
    # 3.11 points this at the last sub-pattern, 3.12+ at the or-pattern.
    source = "match x:\n    case [a] | [b]:\n        pass\n"
    with pytest.raises(TranspileError) as info:
        transpile(source)
    error = info.value
    assert (error.msg, error.lineno, error.offset) == (
        "alternative patterns bind different names",
        2,
        10,
    )


# -- 6. syntax newer than the target ------------------------------------------------


@pytest.mark.skipif(sys.version_info < (3, 11), reason="needs a 3.11 parser")
@pytest.mark.parametrize(
    ("snippet", "message", "position"),
    [
        pytest.param("f[*a, *b]\n", "PEP 646", (1, 3), id="star-subscript"),
        pytest.param(
            "x: tuple[int, *Ts]\n", "PEP 646", (1, 15), id="star-in-annotation"
        ),
        pytest.param("def f(*a: *Ts): pass\n", "PEP 646", (1, 11), id="star-args"),
        pytest.param(
            "try:\n    pass\nexcept* E:\n    pass\n",
            "except*",
            (3, 1),
            id="except-star",
        ),
    ],
)
@pytest.mark.parametrize("target", ["3.6", "3.9"])
def test_syntax_newer_than_the_target_is_refused(
    snippet: str, message: str, position: Tuple[int, int], target: str
) -> None:
    with pytest.raises(TranspileError, match=re.escape(message)) as info:
        transpile(snippet + MATCH, target=target)
    assert (info.value.lineno, info.value.offset) == position


@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs a 3.12 parser")
@pytest.mark.parametrize(
    "snippet",
    ["type X = int\n", "def f[T](x: T): pass\n", "class C[T]: pass\n"],
)
def test_pep_695_is_refused(snippet: str) -> None:
    with pytest.raises(TranspileError, match="PEP 695"):
        transpile(snippet + MATCH)


@pytest.mark.parametrize(
    ("snippet", "target", "fragment"),
    [
        pytest.param("def f(a, /): pass\n", "3.7", "Positional-only", id="posonly-37"),
        pytest.param("def f(a, /): pass\n", "3.6", "Positional-only", id="posonly-36"),
    ],
)
def test_feature_version_errors_name_the_target(
    snippet: str, target: str, fragment: str
) -> None:
    with pytest.raises(TranspileError, match=fragment) as info:
        transpile(MATCH + snippet, target=target)
    assert info.value.lineno == 4


@pytest.mark.parametrize("target", ["3.6", "3.7", "3.8", "3.9"])
def test_match_statements_themselves_are_not_reported(target: str) -> None:
    source = (
        "def f(x):\n    match x:\n        case [a, *b] if a:\n            return b\n"
    )
    compile(transpile(source, target=target), "<out>", "exec")


def test_supported_newer_syntax_passes_for_its_target() -> None:
    assert transpile("def f(a, /): pass\n" + MATCH, target="3.8")
    assert transpile("with (open(a) as b):\n    pass\n" + MATCH, target="3.9")


# -- pathological sizes and names --------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "line",
    [
        pytest.param("y = '" + "a" * 1_100_000 + "'", id="string"),
        pytest.param("pass  # " + "(" * 1_100_000, id="comment"),
        # Kept smaller: the lowering walks every top-level statement to place
        # its helper (lowering/helper_lines.py), about 100 s per megabyte.
        pytest.param("y = [" + "1, " * 20_000 + "]", id="list-display"),
    ],
)
def test_very_long_lines_are_lowered(line: str) -> None:
    source = f"{line}\nmatch x:\n    case [1, 2]:\n        {line}\n"
    output = transpile(source)
    assert len(_lines(output)) == len(_lines(source))
    assert _lines(output)[3] == _lines(source)[3]
    compile(output, "<out>", "exec")


def test_unicode_names_backslashes_and_comments_inside_patterns() -> None:
    source = textwrap.dedent("""\
        class Ünïcode:
            __match_args__ = ("ä",)
            def __init__(self, ä):
                self.ä = ä
        def f(x):
            match x:
                case Ünïcode(  # a comment (((
                    ä=[1, \\
                       ﬁ]  # NFKC: fi
                ) if fi > 0:
                    return fi
                case [match, case] \\
                    | (match, case, _):
                    return match + case
            return None
        match = case = 1
        print(f(Ünïcode([1, 5])), f([2, 3]), match, case)
        """)
    output = transpile(source)
    namespace: dict = {}
    exec(compile(output, "<out>", "exec"), namespace)
    assert len(_lines(output)) == len(_lines(source))


@pytest.mark.slow
def test_growth_is_at_most_linear_in_the_number_of_cases() -> None:
    # Ratios measured within this run, never absolute times: 4x the cases
    # may cost at most ~8x (linear, with generous slack for noise).
    def seconds(n: int) -> float:
        source = "match x:\n" + "".join(
            f"    case {i}:\n        pass\n" for i in range(n)
        )
        start = time.perf_counter()
        transpile(source)
        return time.perf_counter() - start

    seconds(50)  # warm up imports and caches
    small, large = seconds(150), seconds(600)
    assert large < 8 * small + 0.5


def test_without_room_for_a_big_stack_the_work_runs_in_place(monkeypatch) -> None:
    import threading

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    before = sys.getrecursionlimit()
    _assert_lowered(MATCH, transpile(MATCH))
    assert sys.getrecursionlimit() == before


@pytest.mark.parametrize("kind", KINDS)
def test_without_a_tree_the_tokenizer_weighs_patterns_alike(kind: str) -> None:
    # 3.9 cannot parse match statements: there the weights come from tokens.
    import ast

    from spam_transpile.syntax.parse import (
        _heaviest_pattern_from_tokens,
        _heaviest_pattern_from_tree,
    )

    for depth in (1, 3, 9, 17):
        source = (
            f"x = 1\nmatch v:\n    case {_nest(kind, depth)} if f(((1)),):\n"
            "        pass\n    case {'a': [1, (2,)]}:  # ((((\n        pass\n"
        )
        from_tokens = _heaviest_pattern_from_tokens(source)
        from_tree = _heaviest_pattern_from_tree(ast.parse(source), source.split("\n"))
        assert from_tokens is not None and from_tree is not None
        assert from_tokens[:2] == from_tree[:2]


_INVALID_AND_DEEP = r"""
import sys
sys.path.insert(0, sys.argv[1])
from tests.test_hostile_input import _nest
from spam_transpile import transpile, TranspileError
deep = "match v:\n    case " + _nest("tuple", 14) + ":\n        pass\n"
# Found by scripts/mutation_fuzz.py (LibCST never returned): brackets never
# closed, so the tokenizer gives up at the end of the file, past the pattern.
found = (
    "class Config:\n    match MODE:\n        case " + "(" * 17
    + '["fast", *extra],,' + "),),),),),),),),),),),),),),),)"
    + ":\n            speed = 10\n        case _:\n            speed = 0\n"
)
sources = [found]
for tail in ["x = (\n", "  y = 1\n", "case (((((\n", "if x:\ny = 1\n", "'''\n"]:
    sources += [deep + tail, tail + deep]
for source in sources:
    try:
        transpile(source)
    except TranspileError as error:
        assert error.lineno >= 1 and error.offset >= 1, error
    else:
        raise AssertionError(source)
print("ok")
"""


@pytest.mark.slow
def test_invalid_files_with_deep_patterns_are_refused_quickly() -> None:
    # CPython refuses these and the tokenizer gives up on them: LibCST must
    # still never see the deep pattern (it would backtrack for minutes).
    done = subprocess.run(
        [sys.executable, "-c", _INVALID_AND_DEEP, str(REPO)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "ok", done.stderr
