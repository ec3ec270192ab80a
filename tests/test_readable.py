"""The readable layout (what ``--in-place`` and the pre-commit hook write).

It must behave like the match statement it replaces, read like code a person
writes for 3.9 (real statements, lines of at most 88 characters, black-stable,
flake8-clean), and type-check wherever the source did.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from interpreters import require_interpreter
from like_native import FIELDS_AT_RUN_TIME, assert_runs_like_native
from like_native import run as _run
from spam_transpile import transpile
from spam_transpile.lowering.readable_file import format_readable

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted(
    p
    for p in (ROOT / "fixtures" / "cases").glob("*.py")
    if not p.name.endswith(".out.py")
)
BENCH = sorted((ROOT / "scripts" / "bench" / "fixtures").glob("*.py"))
EXAMPLE = ROOT / "fixtures" / "example" / "shapes.py"
COMMANDS = ROOT / "fixtures" / "cases" / "commands.py"
SOURCES = [*CASES, EXAMPLE, *BENCH]


def _readable(path: Path, target: str = "3.9") -> str:
    return transpile(path.read_text("utf-8"), target=target, layout="readable")


@pytest.mark.slow
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_readable_output_behaves_like_native_match(path: Path, tmp_path: Path) -> None:
    native = _run(require_interpreter("3.10"), path, path.parent)
    out = tmp_path / path.name
    out.write_text(_readable(path), "utf-8")
    lowered = _run(require_interpreter("3.9"), out, path.parent)
    assert (lowered.returncode, lowered.stdout) == (
        native.returncode,
        native.stdout,
    ), lowered.stderr.decode()


@pytest.mark.slow
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_readable_output_is_laid_out_for_people(path: Path) -> None:
    source = path.read_text("utf-8")
    out = _readable(path)
    assert not any(isinstance(node, ast.Match) for node in ast.walk(ast.parse(out)))
    longest_source = max(len(line) for line in source.splitlines())
    assert max(len(line) for line in out.splitlines()) <= max(88, longest_source)
    # black-stable: formatting the generated lines again changes nothing
    assert format_readable(source, out, path.name) == out
    # the same statement twice gives the same text (no random names)
    assert _readable(path) == out


def test_example_reads_like_hand_written_code() -> None:
    out = _readable(EXAMPLE)
    # Issue 8's figure was 80, of which the helper block (the exact emulation
    # of 3.10's type flags for old interpreters) was 25, then 36 (issue 19).
    # Issue 21: collections.abc instead, no helper at all; the guard reads
    # the attribute it tests.
    assert len(out.splitlines()) <= 62
    assert "_spam" not in out and "exec(" not in out
    assert "from collections.abc import Mapping, Sequence\n" in out
    assert (
        "    elif (\n"
        "        isinstance(shape, (list, tuple, Sequence))\n"
        "        and not isinstance(shape, (str, bytes, bytearray))\n"
        "        and len(shape) >= 1\n"
        "    ):\n"
    ) in out
    assert (
        "        and shape.radius > 0\n"
        "    ):\n"
        "        x, y = shape.center.x, shape.center.y\n"
    ) in out
    assert (
        "    if isinstance(shape, Point):\n"
        "        if shape.x == 0 and shape.y == 0:\n"
        '            return "the origin"\n'
        "        elif shape.y == 0 or shape.x == 0:  # on an axis\n"
    ) in out
    assert "        first, *rest = shape\n" in out
    assert "            x = shape.x if shape.y == 0 else shape.y\n" in out
    # after cases that all return, the last follows with no ``else``
    assert '        return describe(Point(x, y))\n    return "something else"\n' in out


def test_a_command_dispatch_reads_like_hand_written_code(tmp_path: Path) -> None:
    out = _readable(COMMANDS)
    respond = next(
        node
        for node in ast.parse(out).body
        if isinstance(node, ast.FunctionDef) and node.name == "respond"
    )
    # Issue 8's figure: a 15-line ``match line.split():`` with 7 cases in at
    # most 30 lines after --in-place. The subject's length is taken once,
    # and again after the guard ``direction in EXITS`` (which may run code).
    assert respond.end_lineno is not None
    assert respond.end_lineno - respond.lineno <= 26
    assert (
        "    size = (\n"
        "        len(parts)\n"
        "        if isinstance(parts, (list, tuple, Sequence))\n"
        "        and not isinstance(parts, (str, bytes, bytearray))\n"
        "        else -1\n"
        "    )\n"
    ) in out
    # the guard reads the item; it calls nothing, so the length holds
    assert '    elif size == 2 and parts[0] == "go" and parts[1] in EXITS:\n' in out
    assert "        rest = list(parts)[1:]\n" in out
    assert '    elif size == 1 and parts[0] in ("quit", "exit"):\n' in out
    assert "        item, place = parts[1], parts[3]\n" in out
    body = out.splitlines()[respond.lineno : respond.end_lineno]
    # the kind is asked once, where the length is taken (the one guard
    # calls nothing: trusted not to change the parts)
    assert sum(line.count("isinstance(") for line in body) == 2
    assert sum(line.count("len(parts)") for line in body) == 1
    native = _run(require_interpreter("3.10"), COMMANDS, COMMANDS.parent)
    (tmp_path / COMMANDS.name).write_text(out, "utf-8")
    lowered = _run(require_interpreter("3.9"), tmp_path / COMMANDS.name, tmp_path)
    assert lowered.returncode == native.returncode == 0, lowered.stderr.decode()
    assert lowered.stdout == native.stdout


OR_PATTERN_WITH_GUARD = """\
def f(v):
    match v:
        case [x] | {"k": x} if x:
            return ("hit", x)
        case _:
            return "miss"


print(f([0]), f({"k": 0}), f([1]), f({"k": 2}), f(5))
"""


def test_an_or_pattern_is_tested_whole_before_its_guard(tmp_path: Path) -> None:
    # ``A or B and [stores] and guard`` would store and guard B only.
    out = transpile(OR_PATTERN_WITH_GUARD, layout="readable")
    assert_runs_like_native(OR_PATTERN_WITH_GUARD, out, tmp_path)


KEY_DISPATCH = """\
from collections.abc import Mapping


class Frozen(Mapping):
    def __init__(self, **items):
        self._items = items

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)


def route(event):
    match event:
        case {"type": "click", "x": int(x)}:
            return ("click", x)
        case {"type": "key", "key": str(key)}:
            return ("key", key)
        case {"type": "key" | "press"}:
            return "key without a name"
        case {"type": None}:
            return "none"
        case {"type": str(other), **rest}:
            return ("other", other, sorted(rest))
        case _:
            return "unknown"


EVENTS = [
    {"type": "click", "x": 1},
    {"type": "click", "x": "1"},
    {"type": "key", "key": "q"},
    {"type": "press"},
    {"type": None},
    {"type": "scroll", "dy": 3},
    {"kind": "click"},
    {},
    [],
    ["type", "click"],
    "type",
    None,
    Frozen(type="click", x=2),
    Frozen(type="key"),
]
print([route(event) for event in EVENTS])
for event in EVENTS:
    match event:
        case {"type": "click"}:
            print("module click")
        case {"type": "key"}:
            print("module key")
        case {"type": str()}:
            print("module str")
        case {"type": _}:
            print("module any")
print(sorted(n for n in globals() if n.startswith(("event_", "subject"))))
"""


def test_a_dispatch_key_reads_as_a_person_writes_it(tmp_path: Path) -> None:
    out = transpile(KEY_DISPATCH, layout="readable")
    # One mapping check, the cases nested under it; the parameter is not
    # declared (its values are ``Any``): a key whose value a class check
    # tests is looked up with ``get`` there, as CPython does, and the
    # capture reads it by indexing. Another key is tested with ``in``.
    assert (
        "    if isinstance(event, (dict, Mapping)):\n"
        '        if event.get("type") == "click" and isinstance(event.get("x"), int):\n'
        '            x = event["x"]\n'
    ) in out
    assert '        elif "type" in event:\n' in out
    # ``**rest``: a copy of the mapping without the keys, as CPython makes it
    assert '            rest = dict(event)\n            del rest["type"]\n' in out
    assert "_spam" not in out
    printed = assert_runs_like_native(KEY_DISPATCH, out, tmp_path)
    # the module-level match leaves no variable behind
    assert "[]" in printed.decode()


def test_fields_the_helper_reads_are_read_once_per_case(tmp_path: Path) -> None:
    out = transpile(FIELDS_AT_RUN_TIME, layout="readable")
    assert (
        "        and (pair_fields := _spam.attrs(value, Pair, 2, ())) is not None\n"
    ) in out
    assert "        a, b = pair_fields[0], pair_fields[1]\n" in out
    assert (
        "        and (pair_fields_2 := _spam.attrs(pair_fields[0], Pair, 2, ()))"
    ) in out
    # not at module level, where the variable would stay a global
    assert "    a = _spam.attrs(subject, Pair, 2, ())[0]\n" in out
    assert_runs_like_native(FIELDS_AT_RUN_TIME, out, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["3.6", "3.7", "3.8"])
def test_older_targets_get_the_readable_layout_too(target: str, tmp_path: Path) -> None:
    path = ROOT / "fixtures" / "cases" / "nested_and_loops.py"
    out = tmp_path / path.name
    out.write_text(_readable(path, target), "utf-8")
    native = _run(require_interpreter("3.10"), path, path.parent)
    lowered = _run(require_interpreter(target), out, path.parent)
    assert (lowered.returncode, lowered.stdout) == (
        native.returncode,
        native.stdout,
    ), lowered.stderr.decode()


TYPED = """\
from dataclasses import dataclass
from typing import List, Union


@dataclass
class Point:
    x: int
    y: int


Shape = Union[Point, List[Point], dict, int]


def describe(shape: Shape) -> str:
    match shape:
        case Point(0, 0):
            return "origin"
        case Point(x, 0) | Point(0, x):
            return f"axis {x + 1}"
        case [first, *rest]:
            return describe(first) + str(len(rest))
        case {"x": int(x), "y": int(y)} if x > y:
            return str(x - y)
        case int(n):
            return str(n + 1)
        case _:
            return "other"


def total(item: Union[Point, List[int]]) -> int:
    # Not a sequence for the type checker until a case narrows it.
    match item:
        case [a, b]:
            return a + b
        case [a]:
            return a
        case _:
            return 0


def words(line: str) -> int:
    match line.split():
        case ["go", direction]:
            return len(direction)
        case ["look"]:
            return 0
        case _:
            return -1


@dataclass
class Label:
    text: str


def weight(node: Union[Point, Label]) -> int:
    # ``a`` is a str in one case and an int in the other.
    match node:
        case Label(text=a):
            return len(a)
        case Point(x=a, y=0):
            return a + 1
        case _:
            return 0
"""


def _tool(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", name, *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.mark.slow
def test_mypy_clean_source_stays_mypy_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "shapes.py").write_text(TYPED)
    before = _tool("mypy", "--python-version", "3.10", "pkg", cwd=tmp_path)
    assert before.returncode == 0, before.stdout
    (package / "shapes.py").write_text(transpile(TYPED, layout="readable"))
    # (this mypy checks as 3.10 at the oldest; the output uses nothing newer)
    after = _tool("mypy", "--python-version", "3.10", "pkg", cwd=tmp_path)
    assert after.returncode == 0, after.stdout


EXHAUSTIVE = ROOT / "fixtures" / "readable" / "exhaustive.py"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_a_match_mypy_takes_as_exhaustive_stays_exhaustive(
    target: str, tmp_path: Path
) -> None:
    # The last case's sequence check is spelled so that mypy follows it to
    # the end of the function (no "missing return"), and narrows a
    # ``str | tuple[int, ...]`` subject to the tuple inside the branch; its
    # literal alternatives compare with ``==``, on which mypy narrows a
    # ``Literal[...]`` subject (not on ``in``).
    pytest.importorskip("mypy")
    source = EXHAUSTIVE.read_text("utf-8")
    out = transpile(source, layout="readable", target=target)
    assert "isinstance(value, (list, tuple)) or (\n" in out
    assert '    elif flag == "w" or flag == "a":\n' in out
    for name, text in (("source", source), ("output", out)):
        (tmp_path / f"{name}.py").write_text(text, "utf-8")
        report = _tool("mypy", "--python-version", "3.10", f"{name}.py", cwd=tmp_path)
        assert report.returncode == 0, report.stdout
    assert_runs_like_native(source, out, tmp_path, (target,))


def test_a_capture_typed_differently_by_two_cases_is_declared_object() -> None:
    out = transpile(TYPED, layout="readable")
    weight = out[out.index("def weight") :]
    assert weight.startswith(
        "def weight(node: Union[Point, Label]) -> int:\n"
        "    # ``a`` is a str in one case and an int in the other.\n"
        "    a: object\n"
        "    if isinstance(node, Label):\n"
        "        a = node.text\n"
    )
    # attributes of one class (and a mapping's values): nothing to declare
    assert not re.search(r"^ +\w+: object$", out[: out.index("def weight")], re.M)


DECLARED = """\
from typing import Union


class A:
    x: str
    z: str
    __match_args__ = ("x", "z")


class B:
    y: int
    w: int
    __match_args__ = ("y", "w")


def untyped(v):
    match v:
        case A(a):
            return a
        case B(a):
            return a


def bound_before(v: object) -> object:
    a = None
    match v:
        case A(a):
            return a
        case B(a):
            return a


def in_alternatives(v: object, u: object) -> object:
    match v, u:
        case (A(a, b), A(c, d)) | (B(a, b), B(c, d)):
            return a, b, c, d
        case A(a), _:
            return a
        case B(a), _:
            return a


def global_name(v: object) -> object:
    global a
    match v:
        case A(a):
            return a
        case B(a):
            return a
"""


def test_no_declaration_where_one_is_not_needed_or_would_be_an_error() -> None:
    # Not type-checked (mypy skips an unannotated function), bound before
    # (mypy: already defined), stored inside an or-pattern's alternatives
    # (no narrowing through ``or``), or global (CPython: a SyntaxError).
    out = transpile(DECLARED, layout="readable")
    others = out[: out.index("def in_alternatives")] + out[out.index("def global_") :]
    assert not re.search(r"^ +\w+: object$", others, re.M)
    compile(out, "<out>", "exec")
    # (an or-pattern written once per alternative assigns each one's values:
    # ``a`` holds an ``A``'s ``x`` or a ``B``'s ``y``, declared ``object``)
    alternatives = out[out.index("def in_alternatives") : out.index("def global_")]
    assert "    a: object\n" in alternatives and "        a = v.y\n" in alternatives


@pytest.mark.parametrize("target", ["3.6", "3.7"])
def test_captures_a_guard_reads_are_locals_before_38(
    target: str, tmp_path: Path
) -> None:
    # Stored through their cells in the test (the guard calls: it cannot
    # read the values instead): the compiler must see them as locals,
    # which a bare annotation makes them.
    # (a body that does not leave: a failed guard must reach ``case _``)
    source = (
        "def f(v):\n"
        "    match v:\n"
        "        case [a, b] if same(a, b):\n"
        "            r = 1\n"
        "        case _:\n"
        "            r = 0\n"
        "    return r\n"
        "\n"
        "\n"
        "def same(x, y):\n"
        "    return x == y\n"
        "\n"
        "\n"
        "print(f([1, 1]), f([1, 2]), f(3))\n"
    )
    out = transpile(source, target=target, layout="readable")
    assert "    a: object\n    b: object\n    if " in out
    assert assert_runs_like_native(source, out, tmp_path, (target,)) == b"1 0 0\n\n"


GUARD_READS_VALUES = """\
from dataclasses import dataclass


@dataclass
class Item:
    quantity: int
    price: float


def total(item, seen):
    match item:
        case Item(quantity=q, price=p) if q >= 10:
            return q * p * 0.9
        case Item(quantity=q) if q > 0 and seen:
            return q
        case [first, *rest] if first == len(rest):
            return ("counted", rest)
        case [first, second] if first < second:
            return first
    return None


def kept(item):
    match item:
        case [x] if x > 0:
            pass
    return x


for value in [Item(12, 1.0), Item(3, 2.0), Item(0, 1.0), [2, 5, 6], [1, 2], [5]]:
    print(total(value, True), total(value, False))
for value in [[1], [-1]]:
    try:
        print(kept(value))
    except NameError as error:
        print(type(error).__name__)
"""


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_a_guard_reads_the_captured_values_where_nothing_sees_the_difference(
    target: str, tmp_path: Path
) -> None:
    out = transpile(GUARD_READS_VALUES, target=target, layout="readable")
    total = out[out.index("def total") : out.index("def kept")]
    # as a person writes it: the test reads the attribute, the body assigns
    # (nested under the class test the cases share: the guards make no call)
    assert (
        "    if isinstance(item, Item):\n"
        "        if item.quantity >= 10:\n"
        "            q, p = item.quantity, item.price\n"
    ) in total
    assert "elif item.quantity > 0 and seen:\n            q = item.quantity\n" in total
    # the guard calls: the captures are assigned first, the guard tested
    # inside, the cases after it follow (every body before them returns)
    assert "        first, *rest = item\n        if first == len(rest):\n" in total
    # a body that does not read a capture does not assign it
    assert "        and item[0] < item[1]\n    ):\n        first = item[0]\n" in total
    # read after the match: a failed guard must leave ``x`` bound; the last
    # case of its chain assigns it, then tests its guard inside
    assert "        (x,) = item\n        if x > 0:\n            pass\n" in out
    printed = assert_runs_like_native(GUARD_READS_VALUES, out, tmp_path, (target,))
    assert b"NameError" not in printed


@pytest.mark.slow
def test_readable_output_of_the_benchmarks_adds_no_mypy_error(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    errors = {}
    for side in ("before", "after"):
        package = tmp_path / side / "pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        for path in [EXAMPLE, COMMANDS, *BENCH]:
            text = path.read_text("utf-8")
            if side == "after":
                text = transpile(text, layout="readable")
            (package / path.name).write_text(text, "utf-8")
        report = _tool("mypy", "--python-version", "3.10", "pkg", cwd=package.parent)
        # Lines move in this layout: compare each file's messages.
        errors[side] = sorted(
            re.sub(r":\d+:", ":", line)
            for line in report.stdout.splitlines()
            if ": error:" in line
        )
    assert errors["after"] == errors["before"]


@pytest.mark.slow
@pytest.mark.parametrize("path", [EXAMPLE, COMMANDS, *BENCH], ids=lambda p: p.stem)
def test_readable_output_is_flake8_clean(path: Path, tmp_path: Path) -> None:
    if shutil.which("flake8") is None and not _has("flake8"):
        pytest.skip("flake8 is not installed")
    source = tmp_path / "source.py"
    source.write_text(path.read_text("utf-8"))
    out = tmp_path / "out.py"
    out.write_text(_readable(path))
    args = ["--max-line-length", "88", "--extend-ignore", "E203,E701,E704"]
    before = set(_codes(_tool("flake8", *args, "source.py", cwd=tmp_path).stdout))
    after = _codes(_tool("flake8", *args, "out.py", cwd=tmp_path).stdout)
    assert [code for code in after if code not in before] == []


def _codes(report: str) -> list:
    return [line.split()[1] for line in report.splitlines() if line.strip()]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_the_docs_show_the_example_output_as_it_is() -> None:
    # docs/output.md ("What the output looks like", linked from the README)
    # says unabridged: both blocks are the tool's output for the example today.
    page = (ROOT / "docs" / "output.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    source = EXAMPLE.read_text("utf-8")
    assert blocks[0] == transpile(source, target="3.9")
    assert blocks[1] == transpile(source, target="3.9", layout="readable")


LEAKS = ROOT / "fixtures" / "leaks" / "module_paths.py"


@pytest.mark.parametrize("layout", ["readable", "keep-lines"])
def test_module_and_class_bodies_keep_no_temporary_on_any_path(
    layout: str, tmp_path: Path
) -> None:
    """``break``, ``continue`` and an exception in a case body, and no case
    matching, at module level and in a class body: no temporary of the
    lowering is left a global (nor a name ``from m import *`` takes) or a
    class attribute. Only an exception raised by a check or a guard leaves
    them (README, Known limits)."""
    source = LEAKS.read_text("utf-8")
    out = tmp_path / LEAKS.name
    out.write_text(transpile(source, layout=layout), "utf-8")
    native = subprocess.run(
        [require_interpreter("3.10"), str(LEAKS)], capture_output=True, timeout=60
    )
    assert native.returncode == 0, native.stderr.decode()
    for version in ("3.9", "3.8"):
        ran = subprocess.run(
            [require_interpreter(version), str(out)], capture_output=True, timeout=60
        )
        assert (ran.returncode, ran.stdout) == (0, native.stdout), ran.stderr
    assert b"'subject" not in native.stdout and b"'size" in native.stdout


COMMENTED = """\
def classify(value):
    match value:  # on the match line
        # before the first case

        case [  # a pair
            1,  # one
            2,
        ]:  # after the colon
            return "pair"  # in a body
        # between cases
        case {
            "k": v,  # a key
        } if (
            v  # in the guard
        ):
            return v
        # before the last case
        case _:
            pass
        # after the last case, inside the match
    return "other"


for item in [[1, 2], {"k": 3}, 0]:
    match item:  # module level
        # module: before the first case
        case [1, 2]:
            print("pair")
        # module: between cases
        case _:
            print(classify(item))
        # module: after the last case
    # after the match
"""


def _comments(source: str) -> list:
    """(line, text) of every comment, in order."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("layout", ["readable", "keep-lines"])
def test_comments_stay_where_they_were(layout: str, tmp_path: Path) -> None:
    """Comments on the match line, before the first case, between cases,
    inside a pattern and after the last body are all kept, in their order;
    keep-lines keeps each on its line."""
    out = transpile(COMMENTED, layout=layout)
    written = _comments(out)
    texts = [text for _, text in written]
    wanted = _comments(COMMENTED)
    found = [text for text in texts if text in {t for _, t in wanted}]
    assert found == [text for _, text in wanted]
    if layout == "keep-lines":
        assert set(wanted) <= set(written)
    assert_runs_like_native(COMMENTED, out, tmp_path)


def test_the_abcs_join_the_modules_own_collections_abc_import() -> None:
    source = (
        '"""Doc."""\n'
        "from __future__ import annotations\n"
        "\n"
        "from collections.abc import Mapping\n"
        "import os\n"
        "\n"
        "\n"
        "def f(x):\n"
        "    match x:\n"
        "        case [a]:\n"
        "            return a\n"
        "        case {'k': v}:\n"
        "            return v\n"
    )
    out = transpile(source, layout="readable")
    assert out.count("from collections.abc import") == 1
    assert "from collections.abc import Mapping, Sequence\nimport os\n" in out
    # a module without one gets its own where isort sorts it, black-spaced
    alone = transpile(source.replace("from collections.abc import Mapping\n", ""))
    assert "_spam" in alone  # keep-lines: the exact helper
    readable = transpile(
        source.replace("from collections.abc import Mapping\n", ""), layout="readable"
    )
    assert (
        "from __future__ import annotations\n\n"
        "import os\nfrom collections.abc import Mapping, Sequence\n\n\ndef f(x):\n"
    ) in readable
    # before the next section, a blank line between
    local = transpile(
        source.replace("from collections.abc import Mapping\n", "").replace(
            "import os\n", "import os\nfrom .models import Shape\n"
        ),
        layout="readable",
    )
    assert (
        "import os\nfrom collections.abc import Mapping, Sequence\n\n"
        "from .models import Shape\n"
    ) in local


def test_alternative_classes_are_one_isinstance(tmp_path: Path) -> None:
    source = (
        "class Foo:\n"
        "    pass\n"
        "\n"
        "\n"
        "def f(v):\n"
        "    match v:\n"
        "        case int() | float():\n"
        "            return 'number'\n"
        "        case str(x) | bytes(x):\n"
        "            return x\n"
        "        case Foo() | Bar():\n"
        "            return 'object'\n"
        "\n"
        "\n"
        "Bar = 3  # not a class: CPython raises only when it gets to it\n"
        "for value in [1, 2.5, 'a', b'b', Foo()]:\n"
        "    print(f(value))\n"
        "try:\n"
        "    f(None)\n"
        "except TypeError as error:\n"
        "    print(type(error).__name__)\n"
    )
    out = transpile(source, layout="readable")
    assert "    if isinstance(v, (int, float)):\n" in out
    assert "    elif isinstance(v, (str, bytes)):\n        return v\n" in out
    # a name that may not be a class keeps its check, made in turn
    assert "isinstance(v, (Foo, Bar))" not in out
    assert_runs_like_native(source, out, tmp_path, ("3.9", "3.7"))


NESTED_MATCH_READS_A_CAPTURE = """\
def check(node):
    match node:
        case {"lhs": lhs, "rhs": rhs} if rhs in ("a", "b"):
            match lhs, rhs:
                case [], "a":
                    return "empty"
                case [x], _:
                    return x
            return None
    return "other"


print(check({"lhs": [], "rhs": "a"}), check({"lhs": [1], "rhs": "b"}), check(3))
"""


def test_a_capture_only_a_nested_match_reads_is_still_assigned(
    tmp_path: Path,
) -> None:
    # Found on refurb (simplify_strip.py): the nested match, lowered first,
    # is text the body no longer shows as names.
    out = transpile(NESTED_MATCH_READS_A_CAPTURE, layout="readable")
    assert 'lhs, rhs = node["lhs"], node["rhs"]' in out
    assert_runs_like_native(NESTED_MATCH_READS_A_CAPTURE, out, tmp_path)


GUARD_READS_THE_SUBJECT = """\
def parse(value):
    match value:
        case str(text) if text.count(":") == 1:
            name, port = text.split(":")
            return (name, int(port))
        case str(name) if name and ":" not in name:
            return (name, 22)
        case {"name": str(name), **rest} if not rest:
            return (name, 22)
    return None


def kept(value):
    name = "none"
    match value:
        case str(name) if name.startswith("a"):
            pass
    return name


def deferred(value, log):
    match value:
        case [x, y] if log(lambda: x):
            return y
    return None


for value in ["h:1", "host", "", {"name": "n"}, {"name": "n", "port": 2}, 3]:
    print(parse(value))
print(kept("abc"), kept("xyz"), kept(1))
print(deferred([1, 2], lambda f: f() == 1), deferred([2, 2], lambda f: f() == 1))
"""


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_a_guard_reads_the_subject_itself_even_where_it_calls(
    target: str, tmp_path: Path
) -> None:
    source = GUARD_READS_THE_SUBJECT
    out = transpile(source, target=target, layout="readable")
    parse = out[out.index("def parse") : out.index("def kept")]
    # a capture of the subject is the subject: the guard may call anything,
    # and the body reads the subject too (inlined_captures)
    assert (
        '    if isinstance(value, str) and value.count(":") == 1:\n'
        '        name, port = value.split(":")\n'
    ) in parse
    # ``name`` is read in the first body only after that body assigns it
    assert (
        '    elif isinstance(value, str) and value and ":" not in value:\n'
        "        return (value, 22)\n"
    ) in parse
    # a new dict the guard only tests for truth, and calls nothing: the
    # mapping's size answers (test_guard_values); the body does not read it
    assert 'isinstance(value["name"], str)\n        and len(value) == 1\n' in parse
    assert "rest" not in parse and "name := " not in parse
    assert "_spam.store(lambda: name" not in parse
    # read after the match, where a failed guard leaves it bound
    kept = out[out.index("def kept") : out.index("def deferred")]
    assert "value.startswith" not in kept
    # a function made by the guard could read the capture later
    deferred = out[out.index("def deferred") :]
    assert "log(lambda: x)" in deferred
    assert assert_runs_like_native(source, out, tmp_path, (target,))


def test_a_rest_capture_is_built_with_names_that_shadow_nothing() -> None:
    # (stored for a guard in the test, the rest is one expression)
    source = (
        "def f(value, key):\n"
        "    match value:\n"
        "        case {'a': 1, **rest} if f(rest):\n"
        "            key = rest\n"
        "        case {**everything}:\n"
        "            key = everything\n"
        "    return key\n"
    )
    out = transpile(source, layout="readable")
    assert '{k: v for k, v in dict(value).items() if k not in ("a",)}' in out
    assert "everything = dict(value)\n" in out


def test_a_rest_capture_is_a_copy_without_the_keys() -> None:
    source = (
        "def f(value):\n"
        "    match value:\n"
        "        case {'a': 1, 'b': b, **rest}:\n"
        "            return b, rest\n"
    )
    out = transpile(source, layout="readable")
    assert 'rest = dict(value)\n        del rest["a"], rest["b"]\n' in out


SAME_BODIES = """\
def check(key, value):
    problems = []
    match key, value:
        case "stop", True | False:
            pass
        case "priority", "low" | "high":
            pass
        # a comment keeps its own branch
        case "size", int():
            pass
        case _:
            problems.append(key)
    return problems


for pair in [("stop", True), ("priority", "low"), ("size", 3), ("x", 1)]:
    print(check(*pair))
"""


def test_branches_with_the_same_body_are_one_branch(tmp_path: Path) -> None:
    out = transpile(SAME_BODIES, layout="readable")
    assert (
        '    if (key == "stop" and (value is True or value is False)) or (\n'
        '        key == "priority" and value in ("low", "high")\n'
        "    ):\n"
        "        pass\n"
        "    # a comment keeps its own branch\n"
        # (a case that does nothing before the last: its test negated)
        '    elif key != "size" or not isinstance(value, int):\n'
        "        problems.append(key)\n"
    ) in out
    assert assert_runs_like_native(SAME_BODIES, out, tmp_path, ("3.9",))


GUARD_INSIDE = """\
def version(value):
    match value:
        case str(text) if text.strip():
            return text.strip()
        case [int(major), int(minor), *labels] if all(
            isinstance(label, str) for label in labels
        ):
            return (major, minor, labels)
    return None


for value in [" 1.2 ", "  ", [1, 2], [1, 2, "rc"], [1, 2, 3], ["a", 2], 5]:
    print(version(value))
"""


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_the_last_case_of_a_chain_tests_its_guard_inside(
    target: str, tmp_path: Path
) -> None:
    # Where a failed guard falls off the chain, as a failed pattern does,
    # the captures are assigned first (CPython binds them before the
    # guard) and the guard is an ``if`` of its own: no store in the test,
    # no helper before 3.8.
    out = transpile(GUARD_INSIDE, target=target, layout="readable")
    assert (
        "        major, minor, *labels = value\n"
        "        if all(isinstance(label, str) for label in labels):\n"
        "            return (major, minor, labels)\n"
    ) in out
    assert "_spam" not in out and ":=" not in out
    assert assert_runs_like_native(GUARD_INSIDE, out, tmp_path, (target,))


SPLIT_TUPLE = """\
def step(tokens, level):
    match tokens.pop(), level:
        case ("kw", word), 0:
            return ("top", word)
        case ("kw", word), _ if level > 2:
            return ("deep", word)
        case other, n:
            return (other, n)


def rebound(tokens, level):
    match tokens.pop(), level:
        case _, 0:
            return 0
        case _, level:
            return level


for args in [([("kw", "a")], 0), ([("kw", "b")], 3), ([("x", 1)], 1), ([5], 2)]:
    print(step(list(args[0]), args[1]), rebound(list(args[0]), args[1]))
"""


def test_a_tuple_subject_names_only_what_it_computes(tmp_path: Path) -> None:
    out = transpile(SPLIT_TUPLE, layout="readable")
    step = out[out.index("def step") : out.index("def rebound")]
    # the local name is read where it is, the call's value gets a variable
    assert step.startswith("def step(tokens, level):\n    subject = tokens.pop()\n")
    assert "        if level == 0:\n" in step and "subject[0] ==" in step
    # (the body reads the local name, not a capture of it: inlined_captures)
    assert "other = subject\n    return (other, level)\n" in step
    # a capture rebinds ``level``: the whole tuple has its variable
    rebound = out[out.index("def rebound") :]
    assert "subject = (tokens.pop(), level)\n" in rebound
    # a name not certainly bound is read where CPython reads it (an
    # unbound one raises there)
    late = transpile(
        "def late(tokens):\n"
        "    match tokens.pop(), x:\n"
        "        case (1, _):\n"
        "            return 1\n"
        "    x = 1\n",
        layout="readable",
    )
    assert "subject = (tokens.pop(), x)\n" in late
    assert assert_runs_like_native(SPLIT_TUPLE, out, tmp_path, ("3.9", "3.7"))


GUARD_ENDS_CHAIN = """\
def classify(value, seen):
    match value:
        case [x, *more] if seen(x):
            return ("seen", x, more)
        case [x, y]:
            return ("pair", x, y)
        case str(text) if seen(text):
            return ("seen text", text)
        case _:
            return "other"


def keep(value, seen):
    found = "none"
    match value:
        case [x, *_] if seen(x):
            found = x
        case _:
            found = "other"
    return found


def seen(item):
    return item in (1, "a")


for value in [[1, 2, 3], [2, 3], [1], [4, 5, 6], "a", "b", 7]:
    print(classify(value, seen), keep(value, seen))
"""


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_a_guard_whose_case_leaves_ends_its_chain(target: str, tmp_path: Path) -> None:
    # Every body before it leaves: a failed guard goes on to the cases after
    # it, which follow as an ``if`` of their own.
    out = transpile(GUARD_ENDS_CHAIN, target=target, layout="readable")
    classify = out[out.index("def classify") : out.index("def keep")]
    assert "        x, *more = value\n        if seen(x):\n" in classify
    assert "_spam" not in classify and ":=" not in classify
    # a body that does not leave: the chain stays whole, the capture stored
    keep = out[out.index("def keep") : out.index("def seen")]
    assert "x := value[0]" in keep or "_spam.store(lambda: x" in keep
    assert assert_runs_like_native(GUARD_ENDS_CHAIN, out, tmp_path, (target,))


CLASS_IN_FUNCTION = """\
def f(s):
    class Body:
        match s:
            case {"a": j}:
                found = j
            case [x, *_]:
                found = x
    return Body
"""


def test_a_class_in_a_function_reads_the_abcs_it_needs_as_globals() -> None:
    # cloudpickle copies a function by value with the globals its code reads
    # by LOAD_GLOBAL; a class body reads other names by LOAD_NAME, so the
    # ABCs the layout imports are declared global there
    out = transpile(CLASS_IN_FUNCTION, layout="readable")
    body = out[out.index("class Body:") :].splitlines()
    assert body[1].strip() == "global Mapping, Sequence"
    assert "_spam" not in out
    namespace: dict = {}
    exec(compile(out, "out.py", "exec"), namespace)
    assert namespace["f"]({"a": 1}).found == 1
    assert namespace["f"]([2, 3]).found == 2
    # only the code a function holds: no declaration at module level
    assert "global Mapping" not in transpile(
        CLASS_IN_FUNCTION.replace("def f(s):\n", "s = {}\nif True:\n").replace(
            "    return Body\n", ""
        ),
        layout="readable",
    )


def test_a_class_body_that_reads_the_name_itself_declares_nothing() -> None:
    # ``global Mapping`` after the class body read ``Mapping`` would not
    # compile
    source = CLASS_IN_FUNCTION.replace(
        "    class Body:\n",
        "    class Body:\n        try:\n            Mapping\n"
        "        except NameError:\n            pass\n",
    )
    out = transpile(source, layout="readable")
    compile(out, "out.py", "exec")
    assert "from collections.abc import Mapping, Sequence" in out
    assert "global Sequence\n" in out


# -- the subject's variable is named as a person names it -------------------


@pytest.mark.parametrize(
    "subject, name",
    [
        ("order.status", "status"),  # an attribute: its name
        ("self.get_token()", "token"),  # a getter: what it gets
        ("line.split()", "parts"),
        ("text.splitlines()", "lines"),
        ("order.type", "subject"),  # ``type``: a builtin the code reads
        ("order.Kind", "subject"),  # not a variable's spelling
        ("make()", "subject"),
    ],
)
def test_the_subject_variable_is_named_after_what_it_holds(
    subject: str, name: str
) -> None:
    source = (
        "def f(order, self, line, text, make):\n"
        f"    match {subject}:\n"
        "        case [1] | {'k': 1}:\n"
        "            return 1\n"
        "    return 0\n"
    )
    out = transpile(source, layout="readable")
    assert f"    {name} = {subject}\n" in out


def test_a_name_the_function_uses_is_not_the_subject_variable() -> None:
    source = (
        "def f(order):\n"
        "    status = 1\n"
        "    match order.status:\n"
        "        case [1]:\n"
        "            return status\n"
        "    return 0\n"
        "\n"
        "def g(order):\n"
        "    match order.status:\n"
        "        case [1]:\n"
        "            return 1\n"
        "    return 0\n"
    )
    out = transpile(source, layout="readable")
    # (another function's ``status`` is no variable of ``g``'s)
    assert "    subject = order.status\n" in out
    assert "    status = order.status\n" in out


def test_the_helper_takes_the_builtins_its_parts_read_that_the_module_binds() -> None:
    """A module binding builtin names the helper's parts read gets them
    from ``builtins`` inside the helper: exactly those its parts read
    (for a class's fields: not ``max``, which only the kind part reads,
    nor ``__name__``, which the fields part spells as an attribute)."""
    source = (
        "from elsewhere import Point\n\n"
        "dict = len = tuple = type = object = max = __name__ = None\n\n\n"
        "def f(p):\n"
        "    match p:\n"
        "        case Point(x, y):\n"
        "            return x\n"
    )
    out = transpile(source, layout="readable")
    assert "    from builtins import dict, len, object, tuple, type\n" in out
