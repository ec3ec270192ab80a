"""The cheap test every entry point runs first: can this text hold a match statement?

Kept apart from the parser so that callers can ask without importing LibCST
(a cached rerun over a big tree should not pay for it).
"""

from __future__ import annotations

import re

# A match statement is compound, so it starts a logical line: ``match`` after
# the line's indentation (which may include form feeds). Lines end at \n,
# \r\n or a lone \r (CPython's tokenizer takes all three), and ``^`` in
# MULTILINE mode only knows \n.
_MAY_MATCH = re.compile(r"(?:^|(?<=\r))[ \t\f]*match\b", re.MULTILINE)


def may_contain_match(source: str) -> bool:
    """False means the source certainly has no match statement."""
    return _MAY_MATCH.search(source) is not None
