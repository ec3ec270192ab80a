"""spam_transpile.lowering.declared_subjects: the readable layout trusts
the declared type of a subject (a parameter's annotation, a method's return
annotation) as a reviewer does; the keep-lines layout does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from type_check import assert_mypy_clean
from spam_transpile import transpile

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "fixtures" / "readable" / "declared_subjects.py"

TOKEN = """\
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple


class Token(NamedTuple):
    kind: str
    text: str
    pos: int


"""


def _readable(source: str) -> str:
    return transpile(TOKEN + source, layout="readable")


def _tests_the_kind(out: str) -> bool:
    """Whether the output tests that a subject is a sequence (however the
    layout spells it there)."""
    return "not isinstance(" in out and "(str, bytes, bytearray)" in out


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\ndef ", start + 1)
    return out[start : end if end != -1 else None]


@pytest.mark.parametrize(
    "annotation, pattern, expected",
    [
        # a NamedTuple of three fields: a sequence of length three, whose
        # items read by name; the one case always matches: no ``if``
        (
            "Token",
            "(kind, _, _)",
            "def f(value: Token) -> object:\n    kind = value.kind",
        ),
        ("List[int]", "[first, *_]", "if len(value) >= 1:"),
        ("list", "[first, *_]", "if len(value) >= 1:"),
        ("Tuple[int, str]", "(first, _)", "first = value[0]"),
        ("tuple[int, ...]", "(first, _)", "if len(value) == 2:"),
        ("Dict[str, int]", '{"a": first}', 'if "a" in value:'),
        # (a NamedTuple's field and the subject itself: read where the
        # capture was, inlined_captures)
        ("Token", "Token(kind=first)", "return value.kind"),
        ("str", "str(first)", "return value\n"),
    ],
)
def test_what_a_declaration_answers_is_not_tested(
    annotation: str, pattern: str, expected: str
) -> None:
    source = (
        f"def f(value: {annotation}) -> object:\n"
        "    match value:\n"
        f"        case {pattern}:\n"
        "            return first\n"
        "    return None\n"
    )
    out = _function(_readable(source), "f")
    assert "isinstance" not in out
    assert expected in out


@pytest.mark.parametrize(
    "annotation",
    [
        "Sequence[str]",  # a str is a Sequence, and matches no sequence pattern
        "Optional[Token]",
        "'Token'",
        "object",
    ],
)
def test_a_declaration_that_leaves_the_question_open_keeps_the_test(
    annotation: str,
) -> None:
    source = (
        f"def f(value: {annotation}) -> object:\n"
        "    match value:\n"
        "        case (first, _, _):\n"
        "            return first\n"
        "    return None\n"
    )
    assert _tests_the_kind(_readable(source))


@pytest.mark.parametrize(
    "body",
    [
        "    value = list(value)\n",  # bound again
        "    def g():\n        nonlocal value\n        value = None\n",
        "    del value\n    value = 1\n",
    ],
)
def test_a_parameter_bound_again_is_not_trusted(body: str) -> None:
    source = (
        "def f(value: Token) -> object:\n"
        f"{body}"
        "    match value:\n"
        "        case (first, _, _):\n"
        "            return first\n"
        "    return None\n"
    )
    assert _tests_the_kind(_readable(source))


@pytest.mark.parametrize(
    "subject, pattern, expected",
    [
        # ``str.split`` makes a list: its length is all there is to test,
        # and a star capture is its slice
        ("line.split()", '["add", name, *rest]', "rest = words[1], words[2:]"),
        ("line.rsplit(None, 1)", "[name, _]", "if len(words) == 2:"),
        ("b'a b'.split()", "[name, _]", "if len(words) == 2:"),
        # a tuple of three
        ('line.partition("=")', "(name, _, _)", "name = words[0]"),
    ],
)
def test_a_split_of_a_declared_str_is_a_list(
    subject: str, pattern: str, expected: str
) -> None:
    source = (
        "def f(line: str) -> object:\n"
        f"    words = {subject}\n"
        "    match words:\n"
        f"        case {pattern}:\n"
        "            return name\n"
        "    return None\n"
    )
    out = _function(_readable(source), "f")
    assert not _tests_the_kind(out)
    assert expected in out


@pytest.mark.parametrize(
    "annotation, subject",
    [
        ("object", "line.split()"),  # not declared ``str``
        ("str", "line.split"),  # the method, not its result
        ("str", "line.strip()"),  # a ``str``: matches no sequence pattern
        ("str", "other.split()"),  # not the parameter
        ("str", "words.split()"),  # a local bound by its own split
    ],
)
def test_what_is_not_known_to_be_a_split_keeps_the_test(
    annotation: str, subject: str
) -> None:
    source = (
        f"def f(line: {annotation}, other) -> object:\n"
        "    words = words.split()\n"
        f"    match {subject}:\n"
        "        case [name, _]:\n"
        "            return name\n"
        "    return None\n"
    )
    assert _tests_the_kind(_readable(source))


def test_a_match_on_a_split_runs_like_native(tmp_path: Path) -> None:
    source = (
        "def f(line: str) -> object:\n"
        "    match line.split():\n"
        '        case ["go", where, *rest]:\n'
        "            return where, rest\n"
        "        case [word]:\n"
        "            return word\n"
        "    return None\n"
        "\n"
        'for line in ["go north fast", "go", "stop", "", "go east"]:\n'
        "    print(f(line))\n"
    )
    out = _readable(source)
    assert not _tests_the_kind(out)
    assert_runs_like_native(TOKEN + source, out, tmp_path, ("3.9", "3.7"))
    assert_mypy_clean(out, tmp_path)


METHOD = """\
class Reader:
    def __init__(self, tokens: List[Token]) -> None:
        self.tokens = tokens

    @DECORATOR
    def take(self) -> Token:
        return self.tokens.pop()

    def first(self) -> str:
        match self.take():
            case (kind, _, _):
                return kind
        return ""
"""


def test_a_method_s_return_annotation_is_trusted() -> None:
    out = _function(_readable(METHOD.replace("    @DECORATOR\n", "")), "first")
    assert "token = self.take()" in out and "isinstance" not in out


@pytest.mark.parametrize(
    "change",
    [
        ("    @DECORATOR\n", "    @staticmethod\n"),  # a decorator may return anything
        ("    @DECORATOR\n", "    take = None\n"),  # bound twice in the body
        ("self.take()", "self.take(1)"),  # called with arguments
        ("def first(self)", "def first(this)"),  # ``self`` is no parameter
    ],
)
def test_a_method_that_may_be_another_is_not_trusted(change: tuple) -> None:
    source = METHOD.replace(*change).replace("    @DECORATOR\n", "")
    assert _tests_the_kind(_readable(source))


def test_a_capture_of_the_rest_is_a_dict_or_a_list() -> None:
    out = _function(transpile(PROGRAM.read_text("utf-8"), layout="readable"), "event")
    assert "isinstance(rest," not in out and '"tags" not in rest' in out
    assert "isinstance(items," not in out and "if len(items) >= 1:" in out


@pytest.mark.parametrize(
    "other",
    [
        "    rest = None\n",  # bound otherwise too
        "    match value:\n        case [*rest]:\n            pass\n",  # a list there
    ],
)
def test_a_rest_bound_otherwise_too_keeps_its_test(other: str) -> None:
    source = (
        "def f(value: object) -> object:\n"
        f"{other}"
        "    match value:\n"
        "        case {'a': 1, **rest}:\n"
        "            match rest:\n"
        "                case {'b': b}:\n"
        "                    return b\n"
        "    return None\n"
    )
    assert "isinstance(rest, (dict, Mapping))" in _readable(source)


def test_the_keep_lines_layout_trusts_no_declaration() -> None:
    out = transpile(PROGRAM.read_text("utf-8"))
    assert "_spam.kind(values)" in out and "len(_spam_subject" in out


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_declared_subjects_run_as_native_match(target: str, tmp_path: Path) -> None:
    source = PROGRAM.read_text("utf-8")
    out = transpile(source, layout="readable", target=target)
    assert_runs_like_native(source, out, tmp_path, (target,))


def test_the_output_is_mypy_clean(tmp_path: Path) -> None:
    out = transpile(PROGRAM.read_text("utf-8"), layout="readable")
    assert_mypy_clean(out, tmp_path)


@pytest.mark.parametrize(
    "body, trusted",
    [
        # bound only where it is annotated: the annotation holds
        ("    args: List[int] = []\n", True),
        # bound again elsewhere: the annotation says nothing of that value
        ("    args: List[int] = []\n    args = make()\n", False),
        # an annotation in a nested function is another variable's
        ("    args = make()\n    def g():\n        args: List[int] = []\n", False),
        # annotated without a value: it may hold anything bound elsewhere
        ("    args: List[int]\n    args = make()\n", False),
    ],
)
def test_a_local_annotated_where_it_is_bound_is_trusted(
    body: str, trusted: bool
) -> None:
    source = (
        "def f(make) -> object:\n"
        f"{body}"
        "    match args:\n"
        "        case [first, *_]:\n"
        "            return first\n"
        "    return None\n"
    )
    out = _function(_readable(source), "f")
    assert (not _tests_the_kind(out)) is trusted
    assert ("if len(args) >= 1:" in out) is trusted


def test_a_tuple_subjects_declared_named_tuple_reads_its_items_by_name() -> None:
    source = (
        "class Parser:\n"
        "    def peek(self) -> Token:\n"
        "        return Token('op', ')', 0)\n"
        "\n"
        "    def f(self, args: List[int]) -> object:\n"
        "        match self.peek(), args:\n"
        '            case (_, ")", _), _:\n'
        "                return None\n"
        "            case _, [_, *_]:\n"
        "                return args\n"
        "        return 0\n"
    )
    out = _readable(source)
    assert 'if subject.text == ")":' in out
    assert "elif len(args) >= 1:" in out


@pytest.mark.parametrize(
    "body, pattern, expected",
    [
        # what a display or a comprehension makes is known exactly
        ("    args = [make(x) for x in 'ab']\n", "[first, *_]", "if len(args) >= 1:"),
        ("    args = {'a': make(1)}\n", '{"a": first}', 'if "a" in args:'),
        ("    args = (make(1), 2)\n", "(first, _)", "first = args[0]"),
        ("    args = [make(1)]\n", "list([first])", "if len(args) == 1:"),
        # bound again: nothing known
        ("    args = (make(1), 2)\n    args += (3,)\n", "(first, _)", None),
        (
            "    args = [make(1)]\n    for args in make(2):\n        pass\n",
            "[first]",
            None,
        ),
    ],
)
def test_a_local_bound_once_by_a_display_is_known_to_be_one(
    body: str, pattern: str, expected: object
) -> None:
    source = (
        "def f(make) -> object:\n"
        f"{body}"
        "    match args:\n"
        f"        case {pattern}:\n"
        "            return first\n"
        "    return None\n"
    )
    out = _function(_readable(source), "f")
    if expected is None:
        assert _tests_the_kind(out)
    else:
        assert "isinstance" not in out and expected in out


MEMBERS = ROOT / "fixtures" / "readable" / "declared_members.py"


def _members(target: str = "3.9") -> str:
    return transpile(MEMBERS.read_text("utf-8"), layout="readable", target=target)


@pytest.mark.parametrize(
    "method, expected",
    [
        # ``self.tokens = tokens`` of a ``list[...]`` parameter, sliced: a list
        (
            "def rest",
            "        subject = self.tokens[self.index :]\n        if len(subject) == 0:",
        ),
        # a class-level annotation, set in ``__init__``
        (
            "class Annotated",
            "        items = self.items\n        if len(items) >= 1:",
        ),
    ],
)
def test_a_declared_attribute_is_trusted(method: str, expected: str) -> None:
    out = _members()
    part = out[out.index(method) :]
    assert expected in part[: part.index("return None")]


@pytest.mark.parametrize("owner", ["class Reassigned", "class Hooked"])
def test_an_attribute_set_elsewhere_or_hooked_is_tested(owner: str) -> None:
    out = _members()
    part = out[out.index(owner) :]
    assert "isinstance(items, Sequence)" in part[: part.index("return None")]


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_declared_members_run_as_natively(target: str, tmp_path: Path) -> None:
    source = MEMBERS.read_text("utf-8")
    assert_runs_like_native(source, _members(target), tmp_path, (target,))


def test_a_parameter_whose_default_is_none_is_not_trusted(tmp_path: Path) -> None:
    # (``tags: dict = None``: the annotation does not say what the default is)
    source = (
        "def f(tags: dict = None) -> object:\n"
        "    match tags:\n"
        "        case {'env': env}:\n"
        "            return env\n"
        "    return 'none'\n"
        "\n"
        "\n"
        "print(f(), f({'env': 1}), f({}))\n"
    )
    out = _readable(source)
    assert "isinstance(tags, (dict, Mapping))" in out
    assert_runs_like_native(source, out, tmp_path, ("3.9",))


# -- the items of a sequence declared of one item type ------------------------


@pytest.mark.parametrize(
    "annotation", ["list[Token]", "List[Token]", "tuple[Token, ...]"]
)
def test_the_items_of_a_sequence_of_one_declared_type_are_trusted(
    annotation: str,
) -> None:
    source = (
        f"def f(tokens: {annotation}) -> object:\n"
        "    match tokens[1:]:\n"
        '        case [("end", _, _)]:\n'
        "            return None\n"
        "        case [(_, text, _), *_]:\n"
        "            return text\n"
        "    return 0\n"
    )
    out = _function(_readable(source), "f")
    assert "isinstance" not in out
    assert 'if len(subject) == 1 and subject[0].kind == "end":' in out
    assert "text = subject[0].text" in out


@pytest.mark.parametrize("annotation", ["list[object]", "list", "tuple[Token, int]"])
def test_items_of_no_declared_type_are_tested(annotation: str) -> None:
    source = (
        f"def f(tokens: {annotation}) -> object:\n"
        "    match tokens:\n"
        '        case [("end", _, _), *_]:\n'
        "            return None\n"
        "    return 0\n"
    )
    out = _function(_readable(source), "f")
    assert "isinstance(tokens[0], " in out


def test_declared_items_run_like_native(tmp_path: Path) -> None:
    source = (
        "def f(tokens: List[Token]) -> object:\n"
        "    match tokens:\n"
        '        case [("end", _, _)]:\n'
        "            return None\n"
        "        case [*_, (kind, text, pos)]:\n"
        "            return kind, text, pos\n"
        "    return 0\n"
        "\n"
        "end, word = Token('end', '', 0), Token('name', 'x', 1)\n"
        "for tokens in [[], [end], [word, end], [end, word]]:\n"
        "    print(f(tokens))\n"
    )
    out = _readable(source)
    assert "isinstance" not in _function(out, "f")
    assert_runs_like_native(TOKEN + source, out, tmp_path, ("3.9", "3.7"))
    assert_mypy_clean(out, tmp_path)
