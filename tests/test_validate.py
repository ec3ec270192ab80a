"""spam_transpile.checks.validate: reject exactly the match statements CPython rejects.

Expected messages and positions are CPython 3.12+'s (3.12 and 3.13 agree);
the tables are checked against the real interpreters (3.10 to 3.13, those
found by tests/interpreters.py) as well as against ``check_module``, so a
wrong expectation cannot hide. Positions are (line, 1-based column).
"""

from __future__ import annotations

import functools
import json
import random
import subprocess
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from spam_transpile.errors import TranspileError
from spam_transpile.checks.validate import check_match, check_module
from tests.interpreters import find_interpreter, require_interpreter, targets_required

ORACLES = ("3.10", "3.11", "3.12", "3.13")
Outcome = Optional[Tuple[str, int, int]]  # (message, line, column) or None


def case(*patterns: str) -> str:
    """A match statement with one ``case <pattern>: pass`` per argument."""
    cases = "".join(f"    case {p}:\n        pass\n" for p in patterns)
    return "match x:\n" + cases


# --- running the checker ----------------------------------------------------


def _positions(module: cst.Module) -> Callable[[cst.CSTNode], Tuple[int, int]]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    def position(node: cst.CSTNode) -> Tuple[int, int]:
        start = positions[node].start
        return start.line, start.column + 1

    return position


@functools.lru_cache(maxsize=None)
def _prepared(
    source: str,
) -> Optional[Tuple[cst.Module, Callable[[cst.CSTNode], Tuple[int, int]]]]:
    """The parsed module and its positions, or None if LibCST refuses it."""
    try:
        module = cst.parse_module(source)
        return module, _positions(module)
    except (cst.ParserSyntaxError, cst.CSTValidationError):
        return None


def libcst_accepts(source: str) -> bool:
    return _prepared(source) is not None


def ours(source: str, cpython: Tuple[int, int] = (3, 12)) -> Outcome:
    """What check_module says about ``source`` (which LibCST must accept)."""
    prepared = _prepared(source)
    assert prepared is not None, "LibCST refuses this source"
    module, position = prepared
    try:
        check_module(
            module, filename="<s>", position=position, source=source, cpython=cpython
        )
    except TranspileError as error:
        assert error.filename == "<s>"
        return error.msg, error.lineno, error.offset
    return None


# --- asking CPython -----------------------------------------------------------

_ORACLE_SCRIPT = r"""
import json, sys
out = []
for source in json.load(sys.stdin):
    try:
        compile(source, "<s>", "exec")
        out.append(None)
    except SyntaxError as e:
        out.append([e.msg, e.lineno, e.offset])
print(json.dumps(out))
"""


@functools.lru_cache(maxsize=None)
def _cpython_batch(version: str, sources: Tuple[str, ...]) -> Tuple[Outcome, ...]:
    python = find_interpreter(version)
    assert python is not None
    proc = subprocess.run(
        [python, "-c", _ORACLE_SCRIPT],
        input=json.dumps(list(sources)),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return tuple(None if r is None else tuple(r) for r in json.loads(proc.stdout))


def cpython(version: str, sources: List[str]) -> List[Outcome]:
    return list(_cpython_batch(version, tuple(sources)))


def oracle_or_skip(version: str) -> None:
    """Skip without that CPython (fail instead when CI requires it)."""
    require_interpreter(version)


def _version(version: str) -> Tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


# --- (1) rejected statements: message, line, column as CPython 3.12+ ---------

NAME_CAPTURE_A = "name capture 'a' makes remaining patterns unreachable"
NAME_CAPTURE_X = "name capture 'x' makes remaining patterns unreachable"
WILDCARD = "wildcard makes remaining patterns unreachable"
ALTERNATIVES = "alternative patterns bind different names"
KEY_KIND = "mapping pattern keys may only match literals and attribute lookups"
VALUE_KIND = "patterns may only match literals and attribute lookups"
STARS = "multiple starred names in sequence pattern"
DEBUG = "cannot assign to __debug__"


def dup(name: str) -> str:
    return f"multiple assignments to name {name!r} in pattern"


def dup_key(key: str) -> str:
    return f"mapping pattern checks duplicate key ({key})"


REJECTED = [
    # irrefutable pattern before the last case / alternative
    pytest.param(case("x", "y"), NAME_CAPTURE_X, 2, 10, id="capture-not-last"),
    pytest.param(case("_", "None"), WILDCARD, 2, 10, id="wildcard-not-last"),
    pytest.param(case("(x)", "y"), NAME_CAPTURE_X, 2, 11, id="group-capture-not-last"),
    pytest.param(case("x as y", "z"), NAME_CAPTURE_X, 2, 10, id="as-capture-not-last"),
    pytest.param(case("(_ as y)", "z"), WILDCARD, 2, 11, id="as-wildcard-not-last"),
    pytest.param(case("x | 1"), NAME_CAPTURE_X, 2, 10, id="or-capture-first"),
    pytest.param(
        case("x | [_ as x] if x"), NAME_CAPTURE_X, 2, 10, id="or-guard-no-help"
    ),
    pytest.param(
        case("1 | x", "2"), NAME_CAPTURE_X, 2, 14, id="or-last-alt-not-last-case"
    ),
    pytest.param(case("_ | _"), WILDCARD, 2, 10, id="or-wildcards"),
    pytest.param(case("(None | _) | _"), WILDCARD, 2, 18, id="or-nested-wildcard"),
    pytest.param(case("(x) | (x)"), NAME_CAPTURE_X, 2, 11, id="or-group-captures"),
    pytest.param(
        case("[b | a]"),
        "name capture 'b' makes remaining patterns unreachable",
        2,
        11,
        id="or-in-sequence",
    ),
    pytest.param(
        case("x if x", "y", "z"),
        "name capture 'y' makes remaining patterns unreachable",
        4,
        10,
        id="guarded-then-capture",
    ),
    pytest.param(
        case("_ if g", "_", "_"), WILDCARD, 4, 10, id="wildcard-middle-of-three"
    ),
    # alternatives binding different names: 3.12+ point at the or-pattern
    pytest.param(
        case('"a" | a'), ALTERNATIVES, 2, 10, id="alternatives-literal-capture"
    ),
    pytest.param(
        case("[a, [b] | [c] | [d]]"), ALTERNATIVES, 2, 14, id="alternatives-nested"
    ),
    pytest.param(
        case("[a] | [a, b] | [c]"), ALTERNATIVES, 2, 10, id="alternatives-count"
    ),
    pytest.param(case("[a, b] | [a, *c]"), ALTERNATIVES, 2, 10, id="alternatives-star"),
    pytest.param(
        case("{'a': a} | {'b': b}"), ALTERNATIVES, 2, 10, id="alternatives-mapping"
    ),
    pytest.param(
        case("(\n    [a]\n  |\n [b])"), ALTERNATIVES, 3, 5, id="alternatives-multiline"
    ),
    # a name bound twice
    pytest.param(case("a, a"), dup("a"), 2, 13, id="dup-open-sequence"),
    pytest.param(case("[x, *x]"), dup("x"), 2, 14, id="dup-star"),
    pytest.param(case('{"k": a, "l": a}'), dup("a"), 2, 24, id="dup-mapping-values"),
    pytest.param(case("{'a': x, **x}"), dup("x"), 2, 10, id="dup-mapping-rest"),
    pytest.param(case("MyClass(x, y=x)"), dup("x"), 2, 23, id="dup-class"),
    pytest.param(case("a as a"), dup("a"), 2, 10, id="dup-as"),
    pytest.param(case("[a, b] as a"), dup("a"), 2, 10, id="dup-as-outer"),
    pytest.param(case("[a, ([a] | [a])]"), dup("a"), 2, 15, id="dup-after-or"),
    pytest.param(case("[ﬁ, fi]"), dup("fi"), 2, 16, id="dup-nfkc-bytes"),
    pytest.param(
        "class K:\n    match x:\n        case [__a, __a]:\n            pass\n",
        dup("__a"),
        3,
        20,
        id="dup-unmangled",
    ),
    # __debug__
    pytest.param(case("__debug__"), DEBUG, 2, 10, id="debug-capture"),
    pytest.param(case("[*__debug__]"), DEBUG, 2, 11, id="debug-star"),
    pytest.param(case("{**__debug__}"), DEBUG, 2, 10, id="debug-rest"),
    pytest.param(case("1 as __debug__"), DEBUG, 2, 10, id="debug-as"),
    pytest.param(case("C(__debug__=1)"), DEBUG, 2, 22, id="debug-keyword"),
    # sequences
    pytest.param(case("*a, b, *c, d, *e"), STARS, 2, 10, id="stars-open"),
    pytest.param(case("[1, *_, *_]"), STARS, 2, 10, id="stars-wildcards"),
    pytest.param(case("[a, *b, *c, a]"), STARS, 2, 10, id="stars-before-dup"),
    # mapping keys
    pytest.param(case('{f"": _}'), KEY_KIND, 2, 10, id="key-fstring"),
    pytest.param(
        case("{1: [x, *y, *z], f'': _}"), KEY_KIND, 2, 10, id="keys-before-values"
    ),
    pytest.param(case('{"a": _, "a": _}'), dup_key("'a'"), 2, 10, id="key-dup-str"),
    pytest.param(
        case("{0: _, False: _}"), dup_key("False"), 2, 10, id="key-dup-0-false"
    ),
    pytest.param(case("{0: _, 0.0: _}"), dup_key("0.0"), 2, 10, id="key-dup-0-float"),
    pytest.param(case("{0: _, -0: _}"), dup_key("0"), 2, 10, id="key-dup-minus-zero"),
    pytest.param(case("{0: _, 0j: _}"), dup_key("0j"), 2, 10, id="key-dup-0j"),
    pytest.param(
        case("{1+2j: _, 1+2j: _}"), dup_key("(1+2j)"), 2, 10, id="key-dup-complex"
    ),
    pytest.param(
        case("{1+0j: _, 1: _}"), dup_key("1"), 2, 10, id="key-dup-complex-int"
    ),
    pytest.param(case("{-0.0-0j: _, 0: _}"), dup_key("0"), 2, 10, id="key-dup-folded"),
    pytest.param(case("{1e999: _, 2e999: _}"), dup_key("inf"), 2, 10, id="key-dup-inf"),
    pytest.param(case("{None: a, None: b}"), dup_key("None"), 2, 10, id="key-dup-none"),
    pytest.param(
        case("{'a': _, 'a' 'b': _, 'ab': _}"),
        dup_key("'ab'"),
        2,
        10,
        id="key-dup-concat",
    ),
    pytest.param(
        case("{a.b: x, 1: y, 1: z}"), dup_key("1"), 2, 10, id="key-dup-after-value"
    ),
    pytest.param(
        case("[a, {1: a, 1: c}]"), dup_key("1"), 2, 14, id="key-dup-before-values"
    ),
    pytest.param(
        case("{\n 1: a,\n 1: b}"), dup_key("1"), 2, 10, id="key-dup-multiline"
    ),
    # f-strings
    pytest.param(case('f""'), VALUE_KIND, 2, 10, id="fstring"),
    pytest.param(case('f"{x}"'), VALUE_KIND, 2, 10, id="fstring-field"),
    pytest.param(case("'a' f'b'"), VALUE_KIND, 2, 10, id="fstring-concat"),
    pytest.param(case("[(f'')]"), VALUE_KIND, 2, 12, id="fstring-group"),
    pytest.param(case("[f'', a, a]"), VALUE_KIND, 2, 11, id="fstring-before-dup"),
    # class keywords
    pytest.param(
        case("Class(a=_, a=_)"),
        "attribute name repeated in class pattern: a",
        2,
        23,
        id="kw-repeat",
    ),
    pytest.param(
        case("C(a=1, __debug__=1, a=2)"),
        "attribute name repeated in class pattern: a",
        2,
        32,
        id="kw-repeat-before-debug",
    ),
    pytest.param(
        case("C(x, y, a=1, a=[*p, *q])"),
        "attribute name repeated in class pattern: a",
        2,
        25,
        id="kw-before-subpatterns",
    ),
    pytest.param(
        case("C(ﬁ=1, fi=2)"),
        "attribute name repeated in class pattern: fi",
        2,
        22,
        id="kw-repeat-nfkc",
    ),
    # compiler columns count UTF-8 bytes
    pytest.param(case('["é", a, a]'), dup("a"), 2, 20, id="bytes-column"),
    pytest.param(
        case('["éé", {1: _, 1: _}]'), dup_key("1"), 2, 19, id="bytes-column-mapping"
    ),
    pytest.param(
        'match x:\n\tcase ["é", a, a]: pass\n', dup("a"), 2, 17, id="bytes-column-tab"
    ),
    pytest.param(
        'match x:\r\n    case ["é", a, a]: pass\r\n',
        dup("a"),
        2,
        20,
        id="bytes-column-crlf",
    ),
    pytest.param(
        'match x:\n    case ["é", a,\\\n a]: pass\n',
        dup("a"),
        3,
        2,
        id="backslash-continuation",
    ),
    # order: a case body is compiled before the next case's pattern
    pytest.param(
        "match y:\n    case 1:\n        match x:\n            case a: pass\n"
        "            case b: pass\n    case z:\n        pass\n    case w: pass\n",
        NAME_CAPTURE_A,
        4,
        18,
        id="order-nested-body-first",
    ),
    pytest.param(
        "match y:\n    case [z, z]:\n        match x:\n            case a: pass\n"
        "            case b: pass\n",
        dup("z"),
        2,
        14,
        id="order-pattern-before-body",
    ),
    pytest.param(
        "try:\n    pass\nexcept E:\n    match x:\n        case a: pass\n"
        "        case b: pass\nelse:\n    match x:\n        case [c, c]: pass\n",
        dup("c"),
        9,
        18,
        id="order-try-else-before-handlers",
    ),
    pytest.param(
        "def f():\n    match x:\n        case a: pass\n        case b: pass\n"
        "match x:\n    case [c, c]: pass\n",
        NAME_CAPTURE_A,
        3,
        14,
        id="order-function-body",
    ),
]


@pytest.mark.parametrize("source, message, line, column", REJECTED)
def test_rejected(source: str, message: str, line: int, column: int) -> None:
    assert ours(source) == (message, line, column)


@pytest.mark.slow
@pytest.mark.parametrize("version", ORACLES)
def test_rejected_table_is_what_cpython_says(version: str) -> None:
    oracle_or_skip(version)
    sources = [p.values[0] for p in REJECTED]
    for param, said in zip(REJECTED, cpython(version, sources)):
        source, message, line, column = param.values
        assert said is not None, param.id
        if _version(version) >= (3, 12):
            assert said == (message, line, column), param.id
        elif (version, param.id) != ("3.10", "order-try-else-before-handlers"):
            assert said[0] == message, param.id  # positions: see LEGACY


# 3.10 and 3.11 report these at the last sub-pattern their compiler visited
# (a stale SET_LOC), 3.12+ at the pattern at fault; ``cpython=`` picks one.
LEGACY = [
    pytest.param(case('"a" | a'), (3, 11), ALTERNATIVES, 2, 16, id="alternatives"),
    pytest.param(
        case("[a, [b] | [c] | [d]]"),
        (3, 11),
        ALTERNATIVES,
        2,
        21,
        id="alternatives-nested",
    ),
    pytest.param(
        case("[a, b] | [a, *c]"), (3, 10), ALTERNATIVES, 2, 23, id="alternatives-star"
    ),
    pytest.param(
        case("(\n    [a]\n  |\n [b])"),
        (3, 11),
        ALTERNATIVES,
        5,
        3,
        id="alternatives-multiline",
    ),
    pytest.param(case("{'a': x, **x}"), (3, 11), dup("x"), 2, 16, id="dup-rest"),
    pytest.param(case("[a, b] as a"), (3, 11), dup("a"), 2, 14, id="dup-as"),
    pytest.param(case("[a, ([a] | [a])]"), (3, 10), dup("a"), 2, 22, id="dup-after-or"),
    # 3.10 does not compile wildcard values of a mapping; 3.11 does.
    pytest.param(case("{1: b, 2: _, **b}"), (3, 10), dup("b"), 2, 14, id="rest-3.10"),
    pytest.param(case("{1: b, 2: _, **b}"), (3, 11), dup("b"), 2, 20, id="rest-3.11"),
    # 3.10 compiles a try's handlers before its else block, 3.11+ after.
    pytest.param(
        "try:\n    pass\nexcept E:\n    match x:\n        case a: pass\n"
        "        case b: pass\nelse:\n    match x:\n        case [c, c]: pass\n",
        (3, 10),
        NAME_CAPTURE_A,
        5,
        14,
        id="try-order-3.10",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("source, version, message, line, column", LEGACY)
def test_legacy_positions(
    source: str, version: Tuple[int, int], message: str, line: int, column: int
) -> None:
    assert ours(source, cpython=version) == (message, line, column)
    oracle = "%d.%d" % version
    if find_interpreter(oracle) is not None:
        assert cpython(oracle, [source]) == [(message, line, column)]


# --- (2) CPython 3.10's test_patma.py TestSyntaxErrors ----------------------

# These never reach check_match: LibCST's parser refuses them, with its own
# message (see test_libcst_refuses_these).
REFUSED_BY_LIBCST = {
    "test_imaginary_number_required_in_complex_literal_0",
    "test_imaginary_number_required_in_complex_literal_1",
    "test_real_number_required_in_complex_literal_0",
    "test_real_number_required_in_complex_literal_1",
    "test_real_number_required_in_complex_literal_2",
    "test_real_number_required_in_complex_literal_3",
    "test_invalid_syntax_0",
    "test_invalid_syntax_1",
    "test_invalid_syntax_2",
    "test_invalid_syntax_3",
}


# Run by CPython 3.10 itself: test_patma.py is 3.10 source (an older ``ast``
# cannot parse it) and is read where it is installed, never copied here.
_EXTRACT_SCRIPT = r"""
import ast, inspect, json
import test.test_patma as module

with open(module.__file__, encoding="utf-8") as file:
    tree = ast.parse(file.read())
(cls,) = [
    node
    for node in tree.body
    if isinstance(node, ast.ClassDef) and node.name == "TestSyntaxErrors"
]
snippets = {}
for method in cls.body:
    if not isinstance(method, ast.FunctionDef):
        continue
    for node in ast.walk(method):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "assert_syntax_error"
            and isinstance(node.args[0], ast.Constant)
        ):
            # assert_syntax_error() compiles inspect.cleandoc(code).
            snippets[method.name] = inspect.cleandoc(node.args[0].value)
print(json.dumps(snippets))
"""


@functools.lru_cache(maxsize=None)
def patma_syntax_errors() -> Dict[str, str]:
    """{test name: source} of TestSyntaxErrors in the 3.10 stdlib."""
    python = require_interpreter("3.10")
    proc = subprocess.run(
        [python, "-c", _EXTRACT_SCRIPT], capture_output=True, text=True, timeout=60
    )
    if proc.returncode != 0:  # some distributions strip the test package
        reason = f"{python} cannot read test.test_patma: {proc.stderr}"
        if targets_required():
            pytest.fail(reason)
        pytest.skip(reason)
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_patma_syntax_errors_count() -> None:
    snippets = patma_syntax_errors()
    assert len(snippets) == 40
    refused = {name for name, source in snippets.items() if not libcst_accepts(source)}
    assert refused == REFUSED_BY_LIBCST


@pytest.mark.slow
@pytest.mark.parametrize("version", ORACLES)
def test_patma_syntax_errors_match_cpython(version: str) -> None:
    """Message, line and column of all 30 that LibCST parses, per release."""
    oracle_or_skip(version)
    snippets = {
        name: source
        for name, source in patma_syntax_errors().items()
        if name not in REFUSED_BY_LIBCST
    }
    expected = cpython(version, list(snippets.values()))
    mismatches = [
        (name, said, ours(source, cpython=_version(version)))
        for (name, source), said in zip(snippets.items(), expected)
        if said != ours(source, cpython=_version(version))
    ]
    assert mismatches == []
    assert len(snippets) == 30


def test_libcst_refuses_these() -> None:
    """Errors of CPython's parser that LibCST's parser reports itself.

    Their message and position are LibCST's, not CPython's; the last five
    come from test_syntax.py and 3.13's test_patma.py.
    """
    refused = [
        case("0+0"),  # imaginary number required in complex literal
        case("{0j+0: _}"),  # real number required in complex literal
        case("-0j + 0"),
        case("{**rest, 'key': value}"),  # invalid syntax
        case("{**_}"),
        case("42 as _"),  # cannot use '_' as a target
        case("42 as 1+2+4"),  # invalid pattern target
        case("Foo(z=1, x, y=2)"),  # positional patterns follow keyword patterns
        case("(*x)"),
        case("0 + 0j + 0"),
        case("0j * -0"),
        case('"a" b"b"'),  # cannot mix bytes and nonbytes literals
    ]
    for source in refused:
        assert not libcst_accepts(source), source


# --- (3) valid statements stay valid -------------------------------------------

ACCEPTED = [
    pytest.param(case("[x] | (x,)"), id="or-same-name"),
    pytest.param(case("[a, b] | [b, a]"), id="or-names-reordered"),
    pytest.param(case("([a] as b) | ([b] as a)"), id="or-as-swapped"),
    pytest.param(case("1 | _"), id="or-wildcard-last"),
    pytest.param(case("1 | _ if g", "2"), id="or-wildcard-guarded"),
    pytest.param(case("[x] | [x]"), id="or-refutable-captures"),
    pytest.param(case("_ if g", "x"), id="guarded-wildcard"),
    pytest.param(case("x if x", "y"), id="guarded-capture"),
    pytest.param(case("(x)"), id="group-capture-last"),
    pytest.param(case("1", "_"), id="default-case"),
    pytest.param(case("{0: _, 1: _, None: _, '': _, b'': _}"), id="keys-distinct"),
    pytest.param(case("{'a': _, b'a': _}"), id="keys-str-bytes"),
    pytest.param(case("{1j: _, 1: _}"), id="keys-1j-1"),
    pytest.param(case("{2: _, 1+1j: _}"), id="keys-complex"),
    pytest.param(case("{a.b: _, a.b: _}"), id="keys-value-patterns"),
    pytest.param(case("{**rest}"), id="rest-only"),
    pytest.param(case("{'a': _, **rest}"), id="rest-last"),
    pytest.param(case("C(_, _)"), id="class-wildcards"),
    pytest.param(case("C(a=_, b=_)"), id="class-keywords"),
    pytest.param(case("[_, _]"), id="sequence-wildcards"),
    pytest.param(case("[a, *_, b]"), id="sequence-star-wildcard"),
    pytest.param(case("a, *b"), id="open-sequence"),
    pytest.param(case("a.__debug__"), id="debug-attribute"),
    pytest.param(case("C(x=__debug__.y)"), id="debug-value"),
    pytest.param(case("-0", "0j", "-1-2j", "-0.0", "1_000", "0x_1f"), id="numbers"),
    pytest.param(case("'a' 'b'", "b'a' b'b'", "a.b.c", "(1)", "(None)"), id="literals"),
    pytest.param(
        "class K:\n    match x:\n        case [__a, _K__a]:\n            pass\n",
        id="mangled-differently",
    ),
    pytest.param(
        "match x:\n    case [a]:\n        match y:\n            case [a]:\n"
        "                pass\n    case b:\n        pass\n",
        id="nested-match",
    ),
    pytest.param(case("{**rest,}"), id="rest-trailing-comma"),
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_accepted(source: str) -> None:
    if not libcst_accepts(source):
        pytest.skip("this LibCST refuses it (fixed in LibCST 1.9)")
    assert ours(source) is None


@pytest.mark.slow
@pytest.mark.parametrize("version", ORACLES)
def test_accepted_table_is_what_cpython_says(version: str) -> None:
    oracle_or_skip(version)
    sources = [p.values[0] for p in ACCEPTED]
    assert cpython(version, sources) == [None] * len(sources)


# --- parser rules LibCST already enforces, on trees it would not build ----------


def _rebuilt(source: str, change: Callable[[cst.CSTNode], cst.CSTNode]) -> Outcome:
    """Parse ``source``, apply ``change`` to its first case pattern, check."""
    module = cst.parse_module(source)
    match = module.body[0]
    assert isinstance(match, cst.Match)
    first = match.cases[0]
    new_case = first.with_changes(pattern=change(first.pattern))
    module = module.with_changes(
        body=[match.with_changes(cases=[new_case, *match.cases[1:]])]
    )
    (match,) = module.body
    try:
        check_match(match, filename="<s>", position=_positions(module))
    except TranspileError as error:
        return error.msg, error.lineno, error.offset
    return None


def test_parser_rule_imaginary_required() -> None:
    def real_part(p: cst.MatchValue) -> cst.MatchValue:
        return p.with_changes(value=p.value.with_changes(right=cst.Integer("0")))

    said = _rebuilt(case("0+0j"), real_part)  # match x: case 0+0:
    assert said == ("imaginary number required in complex literal", 2, 12)


def test_parser_rule_real_required() -> None:
    def imaginary_left(p: cst.MatchValue) -> cst.MatchValue:
        minus = p.value.left
        return p.with_changes(
            value=p.value.with_changes(
                left=minus.with_changes(expression=cst.Imaginary("0j"))
            )
        )

    said = _rebuilt(case("-0 + 0j"), imaginary_left)  # case -0j + 0j:
    assert said == ("real number required in complex literal", 2, 11)


def test_parser_rule_unary_plus() -> None:
    def plus(p: cst.MatchValue) -> cst.MatchValue:
        return p.with_changes(value=p.value.with_changes(operator=cst.Plus()))

    said = _rebuilt(case("-1", "x", "y"), plus)  # parser errors come first
    assert said == ("invalid syntax", 2, 10)


def test_unary_plus_as_parsed() -> None:
    if not libcst_accepts(case("+1")):
        pytest.skip("this LibCST refuses `case +1:` itself")
    assert ours(case("[1, {+2: _}]")) == ("invalid syntax", 2, 15)


def test_parser_rule_underscore_target() -> None:
    def underscore(p: cst.MatchAs) -> cst.MatchAs:
        return p.with_changes(name=cst.Name("_"))

    said = _rebuilt(case("42 as y"), underscore)  # case 42 as _:
    assert said == ("cannot use '_' as a target", 2, 16)


@pytest.mark.skipif(
    not hasattr(cst, "TemplatedString"), reason="this LibCST has no t-strings"
)
def test_parser_rule_template_string() -> None:
    # 3.10-3.13 read t"a" as the name t and a string: invalid syntax there.
    assert ours(case("{1: _, rt'a': _}")) == ("invalid syntax", 2, 19)


# --- the contract -----------------------------------------------------------------


def test_parser_errors_win_over_earlier_compiler_errors() -> None:
    def plus(p: cst.MatchValue) -> cst.MatchValue:
        return p.with_changes(value=p.value.with_changes(operator=cst.Plus()))

    source = case("x", "y") + case("-1")
    module = cst.parse_module(source)
    second = module.body[1]
    new_case = second.cases[0].with_changes(pattern=plus(second.cases[0].pattern))
    module = module.with_changes(
        body=[module.body[0], second.with_changes(cases=[new_case])]
    )
    with pytest.raises(TranspileError) as caught:
        check_module(module, filename="f.py", position=_positions(module))
    assert (caught.value.msg, caught.value.lineno, caught.value.offset) == (
        "invalid syntax",
        7,
        10,
    )


def test_check_match_is_a_syntax_error_with_filename() -> None:
    source = case("x", "y")
    module = cst.parse_module(source)
    with pytest.raises(SyntaxError) as caught:
        check_match(module.body[0], filename="f.py", position=_positions(module))
    assert caught.value.filename == "f.py"
    assert str(caught.value) == (
        "f.py:2:10: error: name capture 'x' makes remaining patterns unreachable"
    )


def test_without_source_columns_count_characters() -> None:
    source = case('["é", a, a]')
    module = cst.parse_module(source)
    with pytest.raises(TranspileError) as caught:
        check_match(module.body[0], filename="<s>", position=_positions(module))
    assert (caught.value.lineno, caught.value.offset) == (2, 19)


def test_valid_match_returns_none() -> None:
    source = case("[a, *b]", "{'k': c, **d}", "C(e, f=g) as h", "_")
    module = cst.parse_module(source)
    assert (
        check_match(module.body[0], filename="<s>", position=_positions(module)) is None
    )


# --- random patterns against every CPython found ----------------------------------

_NAMES = ["a", "b", "c", "_", "_", "__debug__", "é", "ﬁ", "fi"]
_KEYS = ["0", "False", "0.0", "-0", "0j", "'a'", "b'a'", "None", "True", "1"]
_KEYS += ["1.0", "a.b", "f''", "'a' 'b'", "'ab'", "1+0j", "-1-0j", "-0.0"]
_LITERALS = ["1", "-1", "'s'", "None", "True", "f'x'", "a.b", "1+2j", "b'x'", "'é'"]


class _PatternMaker:
    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    def pattern(self, depth: int) -> str:
        rnd = self.rnd
        kind = rnd.randrange(9) if depth > 0 else rnd.randrange(2)
        if kind == 0:
            return rnd.choice(_NAMES)
        if kind == 1:
            return rnd.choice(_LITERALS)
        if kind == 2:
            count = rnd.randint(2, 3)
            return " | ".join(self.closed(depth - 1) for _ in range(count))
        if kind == 3:
            target = rnd.choice(["a", "b", "c", "__debug__", "ﬁ"])
            return f"{self.closed(depth - 1)} as {target}"
        if kind in (4, 8):
            items = [self.item(depth - 1) for _ in range(rnd.randint(kind // 8, 4))]
            if kind == 4:
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if kind == 5:
            items = [
                f"{rnd.choice(_KEYS)}: {self.pattern(depth - 1)}"
                for _ in range(rnd.randint(0, 3))
            ]
            if rnd.random() < 0.3:
                items.append("**" + rnd.choice(["a", "b", "rest", "__debug__"]))
            return "{" + ", ".join(items) + "}"
        if kind == 6:
            args = [self.pattern(depth - 1) for _ in range(rnd.randint(0, 2))]
            args += [
                f"{rnd.choice(['x', 'y', '__debug__', 'ﬁ', 'fi'])}={self.pattern(depth - 1)}"
                for _ in range(rnd.randint(0, 3))
            ]
            return rnd.choice(["C", "a.C"]) + "(" + ", ".join(args) + ")"
        return "(" + self.pattern(depth - 1) + ")"

    def item(self, depth: int) -> str:
        if self.rnd.random() < 0.2:
            return "*" + self.rnd.choice(_NAMES)
        return self.pattern(depth)

    def closed(self, depth: int) -> str:
        p = self.pattern(depth)
        return f"({p})" if " | " in p or " as " in p else p

    def statement(self, indent: str, depth: int) -> str:
        lines = [indent + "match x:\n"]
        for _ in range(self.rnd.randint(1, 3)):
            p = self.pattern(self.rnd.randint(0, 3))
            if self.rnd.random() < 0.15:
                p += ", " + self.closed(1)
            if self.rnd.random() < 0.2:
                p += " if g"
            lines.append(f"{indent}    case {p}:\n")
            if depth > 0 and self.rnd.random() < 0.3:
                lines.append(self.statement(indent + "        ", depth - 1))
            else:
                lines.append(indent + "        pass\n")
        return "".join(lines)


def random_statements(seed: int, count: int) -> List[str]:
    maker = _PatternMaker(seed)
    return [maker.statement("", 2) for _ in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize("version", ORACLES)
def test_random_patterns_match_cpython(version: str) -> None:
    oracle_or_skip(version)
    sources = [s for s in random_statements(seed=1, count=400) if libcst_accepts(s)]
    expected = cpython(version, sources)
    mismatches = []
    for source, said in zip(sources, expected):
        got = ours(source, cpython=_version(version))
        if got != said:
            mismatches.append((source, said, got))
    assert mismatches == []
    assert sum(said is not None for said in expected) > len(sources) // 2


@pytest.mark.slow
@pytest.mark.parametrize("version", ORACLES)
def test_many_random_patterns_match_cpython(version: str) -> None:
    oracle_or_skip(version)
    sources = [s for s in random_statements(seed=2, count=1500) if libcst_accepts(s)]
    expected = cpython(version, sources)
    mismatches = [
        (source, said)
        for source, said in zip(sources, expected)
        if ours(source, cpython=_version(version)) != said
    ]
    assert mismatches == []
