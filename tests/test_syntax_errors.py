"""End to end: ``transpile()`` refuses test_patma's TestSyntaxErrors snippets as
CPython 3.12+ does (message, line, column).

CPython 3.12 and 3.13 compile each snippet (in a subprocess); the tool, run
here, must raise the same error. Snippets LibCST's parser refuses get their
message from the running interpreter's ``compile()`` (3.10+), so this test
needs a 3.10+ tool interpreter for those.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from spam_transpile import TranspileError, transpile
from tests.interpreters import require_interpreter

# Extract the snippets from the installed 3.10 test_patma, compile each on the
# running (oracle) interpreter, print [name, code, [msg, line, col]] as JSON.
_ORACLE = r"""
import ast, json, sys, textwrap
source = open(sys.argv[1]).read()
tree = ast.parse(source)
(errors,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TestSyntaxErrors"]
out = []
for fn in errors.body:
    if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_"):
        for node in ast.walk(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "match" in node.value:
                code = textwrap.dedent(node.value)
                try:
                    compile(code, "<s>", "exec")
                    expected = None
                except SyntaxError as e:
                    expected = [e.msg, e.lineno, e.offset]
                out.append([fn.name, code, expected])
                break
print(json.dumps(out))
"""


def _test_patma_path() -> str:
    python = require_interpreter("3.10")
    return subprocess.run(
        [python, "-c", "import test.test_patma as t; print(t.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.mark.slow
@pytest.mark.skipif(
    sys.version_info < (3, 10), reason="needs compile() that knows match"
)
@pytest.mark.parametrize("oracle", ["3.12", "3.13"])
def test_syntax_error_snippets_are_refused_like_cpython(oracle: str) -> None:
    python = require_interpreter(oracle)
    snippets = json.loads(
        subprocess.run(
            [python, "-c", _ORACLE, _test_patma_path()],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert len(snippets) == 40
    differences = []
    for name, code, expected in snippets:
        assert expected is not None, f"{name}: CPython {oracle} accepts it"
        try:
            transpile(code, filename="<s>")
            got = None
        except TranspileError as error:
            got = [error.msg, error.lineno, error.offset]
        if got != expected:
            differences.append(f"{name}: CPython {expected}, spam_transpile {got}")
    assert differences == []
