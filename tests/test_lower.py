"""The lowering stage alone: pattern -> steps and captures (ir.dump text).

Each table row pins the order of CPython's work for one pattern kind: what
is checked, read and bound, and when.
"""

from __future__ import annotations

import libcst as cst
import pytest

from spam_transpile.lowering.ir import dump
from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.names import Names


def _lower(pattern: str) -> str:
    module = cst.parse_module(f"match s:\n    case {pattern}:\n        pass\n")
    match = module.body[0]
    assert isinstance(match, cst.Match)
    names = Names(frozenset(), frozenset())
    lowering = Lowering(names, module.code_for_node)
    text = dump(lowering.lower_case(match.cases[0].pattern, "v"))
    # The long sequence/mapping tests are runtime's business; keep rows short.
    return "\n".join(
        line.split(" ", 1)[0] + " <kind test>" if "__flags__" in line else line
        for line in text.splitlines()
    )


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        pytest.param("1", "check v == 1", id="literal-compares-with-eq"),
        pytest.param("None", "check v is None", id="singleton-compares-with-is"),
        pytest.param("x", "bind x = v", id="capture"),
        pytest.param("_", "", id="wildcard-does-nothing"),
        pytest.param(
            "[a, 1]",
            "check <kind test>\ncheck len(v) == 2\nunpack _spam_item4, _spam_item5 = v\n"
            "check _spam_item5 == 1\nbind a = _spam_item4",
            id="sequence-unpacks-once-then-checks-then-binds",
        ),
        pytest.param(
            "[a, *_, 1]",
            "check <kind test>\ncheck len(v) >= 2\nlet _spam_item4 = v[0]\n"
            "let _spam_item5 = v[len(v) - 1]\ncheck _spam_item5 == 1\nbind a = _spam_item4",
            id="star-wildcard-indexes-with-len",
        ),
        pytest.param(
            "{'k': 1, **rest}",
            "check <kind test>\ncheck len(v) >= 1\nlet _spam_get4 = v.get\n"
            "let _spam_missing5 = object()\nlet _spam_value6 = _spam_get4('k', _spam_missing5)\n"
            "check _spam_value6 is not _spam_missing5\ncheck _spam_value6 == 1\n"
            "let _spam_rest7 = {**v}\ncheck [_spam_rest7.pop('k')]\nbind rest = _spam_rest7",
            id="mapping-gets-then-checks-then-builds-rest",
        ),
        pytest.param(
            "int(n)",
            "check isinstance(v, int)\nbind n = v",
            id="builtin-matches-itself",
        ),
    ],
)
def test_lowering_order(pattern: str, expected: str) -> None:
    assert _lower(pattern) == expected
