"""Layout fuzzing: valid programs in every layout CPython's tokenizer takes.

The programs of fixtures/cases get blank and whitespace-only lines, comment
lines, backslash-only lines, form feeds and trailing comments anywhere
between and around their statements (match statements included), and LF,
CRLF, CR or mixed line endings. Each variant must be lowered with every line
kept (with its own ending), and print the same natively on CPython 3.10 as
lowered on CPython 3.9.
"""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import tokenize
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from spam_transpile import transpile
from tests.interpreters import require_interpreter

pytestmark = pytest.mark.slow

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
VARIANTS = 70
_LINE_END = re.compile(r"\r\n|\r|\n")


def _programs() -> Dict[str, str]:
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(CASES.glob("*.py"))
        if not path.name.endswith(".out.py")
    }


def _statement_lines(text: str) -> Tuple[List[int], Dict[int, str]]:
    """0-based lines where a logical line starts, and for each the text of the
    code line before it (to know whether it opened a block)."""
    starts: List[int] = []
    previous: Dict[int, str] = {}
    last_code = ""
    at_start = True
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tokenize.tok_name[token.type]
        if kind in ("NL", "COMMENT", "INDENT", "DEDENT", "ENDMARKER"):
            continue
        if at_start:
            starts.append(token.start[0] - 1)
            previous[token.start[0] - 1] = last_code
        at_start = kind == "NEWLINE"
        if kind == "NEWLINE":
            last_code = token.line
    return starts, previous


# A match or case header: the lowering rewrites it, and keeps a backslash-only
# line next to it safe for 3.9 itself.
_HEADER = re.compile(r"[ \t]*(match|case) .*:[ \t]*(#.*)?$")


def _backslash_safe(code_line_before: str, indent: str) -> bool:
    """May a backslash-only line go here and mean the same to 3.9 and 3.10?

    3.10+ ignore such a line; 3.9 takes the next line's indentation as part
    of the continued line (no INDENT/DEDENT), so only where the code lines
    around it are indented alike. (The lowering keeps its own rewritten
    lines safe: spam_transpile.syntax.layout.)
    """
    before = re.match(r"[ \t]*", code_line_before).group()  # type: ignore[union-attr]
    return bool(code_line_before.strip()) and before == indent


def _noise(rng: random.Random, indent: str, backslash_safe: bool) -> str:
    kinds = ["blank", "spaces", "comment", "ff-comment"]
    if backslash_safe:
        kinds += ["backslash", "backslash"]
    kind = rng.choice(kinds)
    return {
        "blank": "",
        "spaces": rng.choice([" ", "\t", "        ", " \t "]),
        "comment": rng.choice(["", indent, "  "]) + "# noise (((",
        "ff-comment": "\f" + indent + "# page",
        "backslash": indent + "\\",
    }[kind]


def variant(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    starts, previous = _statement_lines(text)
    chosen = set(rng.sample(starts, k=min(len(starts), rng.randint(1, 8))))
    out: List[str] = []
    for number, line in enumerate(lines):
        if number in chosen:
            indent = re.match(r"[ \t]*", line).group()  # type: ignore[union-attr]
            safe = _backslash_safe(previous.get(number, ""), indent) or any(
                _HEADER.match(text) for text in (previous.get(number, ""), line)
            )
            out.append(_noise(rng, indent, safe))
            if rng.random() < 0.3:
                line = "\f" + line  # a form feed in the indentation
        if number + 1 in chosen and line.strip() and rng.random() < 0.3:
            line = line + "  # trailing"
        out.append(line)
    return _with_endings(out, rng)


def _with_endings(lines: List[str], rng: random.Random) -> str:
    style = rng.choice(["\n", "\r\n", "\r", "mixed"])
    endings = [
        rng.choice(["\n", "\r\n", "\r"]) if style == "mixed" else style
        for _ in lines[:-1]
    ]
    return "".join(line + end for line, end in zip(lines, endings)) + lines[-1]


def _variants() -> List[Tuple[str, str]]:
    rng = random.Random(20261203)
    programs = sorted(_programs().items())
    made = []
    for number in range(VARIANTS):
        name, text = programs[number % len(programs)]
        made.append((f"{name}#{number}", variant(text, rng)))
    return made


@pytest.fixture(scope="module")
def lowered() -> List[Tuple[str, str, str]]:
    return [
        (name, source, transpile(source, filename=name)) for name, source in _variants()
    ]


def test_every_layout_is_lowered_with_its_lines_and_endings(lowered) -> None:
    changed = 0
    for name, source, output in lowered:
        assert _LINE_END.findall(output) == _LINE_END.findall(source), name
        compile(output, name, "exec", dont_inherit=True)
        changed += output != source
    assert changed >= VARIANTS * 0.8  # almost every fixture has a match


# Runs each program in a fresh namespace and prints what it printed (or the
# exception's type); the same on 3.9 and 3.10.
_RUNNER = r"""
import contextlib, io, json, sys
results = []
for name, text in json.load(sys.stdin):
    buffer = io.StringIO()
    sys.argv = [name]
    try:
        with contextlib.redirect_stdout(buffer):
            exec(compile(text, name, "exec", dont_inherit=True), {"__name__": "__main__"})
        results.append(buffer.getvalue())
    except BaseException as exc:
        results.append(buffer.getvalue() + "raised " + type(exc).__name__)
print(json.dumps(results))
"""


def _run(python: str, programs: List[Tuple[str, str]]) -> List[str]:
    done = subprocess.run(
        [python, "-c", _RUNNER],
        input=json.dumps(programs),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_lowered_layouts_run_on_39_as_the_originals_on_310(lowered) -> None:
    native = _run(require_interpreter("3.10"), [(n, s) for n, s, _ in lowered])
    on_39 = _run(require_interpreter("3.9"), [(n, o) for n, _, o in lowered])
    different = [
        f"{name}: 3.10 {a!r} / 3.9 {b!r}"
        for (name, _, _), a, b in zip(lowered, native, on_39)
        if a != b
    ]
    assert different == []
    assert not any(
        result.endswith(("raised SyntaxError", "raised IndentationError"))
        for result in native
    )
