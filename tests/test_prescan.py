"""The one pre-scan every entry point asks (``syntax.prescan.may_hold_match``):
False only where no match statement can be, whatever line endings and
indentation CPython accepts, on text and on a file's bytes alike."""

from __future__ import annotations

import ast
import codecs
import sys
from pathlib import Path

import pytest

from spam_transpile import transpile
from spam_transpile.syntax.prescan import may_hold_match

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "cases"
TREES = ROOT / "fixtures" / "trees"

needs_310 = pytest.mark.skipif(
    sys.version_info < (3, 10), reason="the standard tree needs 3.10+"
)


@pytest.mark.parametrize(
    "text, could",
    [
        ("match = 1\n", False),
        ("  match.group(1)\n", False),
        ("match, rest = 1, 2\n", False),
        ("match: int = 1\n", False),
        ("match += 1\n", False),
        ("match\n", False),
        ("match  # note\n", False),
        ("x = [\n    match\n    for match in y\n]\n", False),
        ("match x:\n", True),
        ("match(x):\n", True),
        ("match [a]:\n", True),
        ("match -x:\n", True),
        ("match .5:\n", True),
        ("match ...:\n", True),
        ("match *a, b:\n", True),
        ("match \\\n  x:\n", True),
        ("match not x:\n", True),
        ("match = 1\nmatch x:\n", True),
        ("    match the given pattern in a docstring.\n", False),
        ("match x  :  \r\n", True),
        ('match "a#b":\n', True),
        ("match x:  # a comment\n", True),
        ("match a if b else c:\n", True),
        ("match (\n    x\n):\n", True),
        ("\x0cmatch x:\n", True),  # a form feed is indentation too
        # Old Mac line endings: every line ends with a lone \r.
        ("x = 1\rmatch x:\r    case 1: pass\r", True),
        ("x = 1\rmatch = 2\r", False),
        ("x = 1\r\n\x0c  \x0cmatch x:\r\n", True),
        ("if 1:\r  \x0c  match x:\r", True),
        ("\ufeffmatch x:\n", True),
        ("x = 1\n\tmatch x:\n", True),
        # Not a statement's start: CPython refuses these.
        ("x = 1; match y:\n", False),
        ("if x: match y:\n", False),
        ("\x0bmatch x:\n", False),
    ],
)
def test_may_hold_match(text: str, could: bool) -> None:
    assert may_hold_match(text) is could
    # The build integrations and the import hook ask about raw bytes.
    assert may_hold_match(text.encode("utf-8")) is could


def test_bytes_with_a_byte_order_mark() -> None:
    source = codecs.BOM_UTF8 + b"match x:\r    case 1: pass\r"
    assert may_hold_match(source)


CPYTHON_ACCEPTS = [
    "x = [1]\rmatch x:\r    case [a]:\r        pass\r",
    "x = [1]\r\nmatch x:\r\n    case [a]:\r\n        pass\r\n",
    "x = [1]\nif x:\r  \x0c  match x:\r\n        case [a]:\n            pass\r",
    "\x0cmatch 1:\n    case 1:\n        pass\n",
    "\\\nmatch 1:\n    case 1:\n        pass\n",
    "if 1:\n    \\\n    match 1:\n        case 1:\n            pass\n",
    "class C:\r\tmatch 1:\r\t\tcase 1: pass\r",
]


@needs_310
@pytest.mark.parametrize("source", CPYTHON_ACCEPTS)
def test_every_match_statement_cpython_compiles_is_seen(source: str) -> None:
    tree = ast.parse(source)
    assert any(isinstance(node, ast.Match) for node in ast.walk(tree))
    assert may_hold_match(source)
    assert may_hold_match(source.encode("utf-8"))
    assert transpile(source) != source


def test_never_hides_a_real_match_statement() -> None:
    sources = [p for p in CASES.glob("*.py") if not p.name.endswith(".out.py")]
    sources += list((TREES / "basic" / "input").rglob("*.py"))
    for path in sources:
        raw = path.read_bytes()
        if _transpile_changes(raw.decode("latin-1")):
            assert may_hold_match(raw.decode("latin-1")), path
            assert may_hold_match(raw), path
            assert may_hold_match(raw.replace(b"\n", b"\r")), path


def _transpile_changes(text: str) -> bool:
    try:
        return transpile(text) != text
    except Exception:
        return False


def test_one_prescan_for_every_entry_point() -> None:
    """The command line, the pipeline, the parser, the build integrations
    and the import hook ask the same function."""
    from spam_transpile import pipeline
    from spam_transpile.files import runner
    from spam_transpile.integrations import import_hook
    from spam_transpile.syntax import parse
    import spam_transpile.integrations as integrations

    for module in (runner, pipeline, parse, integrations, import_hook):
        assert module.may_hold_match is may_hold_match, module.__name__
