"""The cheap test every entry point runs first: can this text hold a match statement?

One function, :func:`may_hold_match`, for the command line, the pipeline,
the parser's fallback, the build integrations and the import hook, on
decoded text or on a file's raw bytes. Kept apart from the parser so that
callers can ask without importing LibCST (a cached rerun over a big tree
should not pay for it).

A match statement is compound, so it starts a logical line: ``match`` is
the first token of a physical line, after its indentation (spaces, tabs and
form feeds: CPython's tokenizer skips nothing else there; ``x = 1; match
y:`` and ``if x: match y:`` do not compile). Lines end at ``\\n``,
``\\r\\n`` or a lone ``\\r``: CPython's tokenizer takes all three, in one
file even. The first line may start with a UTF-8 byte order mark.

Only sure cases are excluded: a false True costs a parse, a false False
would leave a match statement in the output.
"""

from __future__ import annotations

import re
from typing import Union

__all__ = ["may_hold_match"]

# ``match`` first on a line (``\r`` already made a line end), and the rest of
# the line. A byte order mark is only allowed first in a file; allowing it
# first on any line costs nothing but a rare parse. Raw bytes are read as
# Latin-1 (one character per byte), so the mark is three characters there.
_MATCH_AT_LINE_START = re.compile(
    r"^(?:\ufeff|\xef\xbb\xbf)?[ \t\f]*match\b(.*)$", re.MULTILINE
)

# What follows ``match`` where no match statement can have it: ``=`` (not
# ``==``), ``:``, ``,``, ``;``, a closing bracket, ``.name``, an augmented
# assignment, a binary-only keyword, a comment or the end of the line.
# Whatever else follows (``(``, ``[``, ``-``, ``.5``, a name, a backslash)
# might be a subject.
_NOT_A_SUBJECT = re.compile(
    r"""[ \t\f]*(?:
        =(?!=) | : | , | [)\]}] | ;
      | \.[ \t\f]*[A-Za-z_]
      | (?:\*\*|//|>>|<<|[-+*/%&|^@])=
      | (?:in|is|and|or|if|else|for|as)\b
      | \#.* | $
    )""",
    re.VERBOSE,
)

# What can carry a statement's header on past its physical line.
_CARRIERS = frozenset("([{'\"#\\")


def may_hold_match(source: Union[str, bytes]) -> bool:
    """False means ``source`` (text, or a file's bytes in an ASCII-compatible
    encoding, as PEP 263 requires) certainly has no match statement."""
    text = source.decode("latin-1") if isinstance(source, bytes) else source
    if "match" not in text:
        return False
    if "\r" in text:
        # ``$`` and ``^`` only know ``\n``; an added blank line is harmless.
        text = text.replace("\r", "\n")
    for hit in _MATCH_AT_LINE_START.finditer(text):
        rest = hit.group(1)
        if not (_NOT_A_SUBJECT.match(rest) or _one_line_without_colon(rest)):
            return True
    return False


def _one_line_without_colon(rest: str) -> bool:
    # A match statement's header ends with ":" on its own line unless a
    # bracket, a string or a backslash carries it on (or a comment follows);
    # a line free of all of those that does not end with ":" is prose, like
    # "match the corresponding ASCII characters" in a docstring.
    return not _CARRIERS.intersection(rest) and not rest.rstrip().endswith(":")
