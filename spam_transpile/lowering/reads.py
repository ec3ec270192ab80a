"""Where a text of lowered code reads a value: string search, for the
lowering's rewrites of the tests it writes (early_binding) and for the
stores that must not read a name the same call stores (emit)."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

__all__ = ["Reads"]


class Reads:
    """Where a text reads ``value``: where it is spelled with no word
    character or dot just before it, and no word character or ``:=`` (a
    store) after it. A defaulted ``get`` (``s.get(k, ``) reads on to the
    ``)`` closing its default (``_spam.MISSING)``).

    String search, not a regular expression per value: values are seldom
    spelled alike twice, and compiling an expression for each cost more
    than all the rest of the search.
    """

    def __init__(self, value: str) -> None:
        self.value = value
        self._defaulted = value.endswith(", ")

    def finditer(self, text: str) -> Iterator[Tuple[int, int]]:
        """Each read's ``(start, end)``, left to right, not overlapping."""
        at = 0
        while True:
            found = self.search(text, at)
            if found is None:
                return
            yield found
            at = found[1]

    def search(self, text: str, at: int = 0) -> Optional[Tuple[int, int]]:
        """The first read from ``at`` on."""
        value = self.value
        start = text.find(value, at)
        while start != -1:
            end = self._end(text, start, start + len(value))
            if end is not None:
                return start, end
            start = text.find(value, start + 1)
        return None

    def sub(self, name: str, text: str) -> str:
        """``text`` with each read replaced by ``name``."""
        pieces, at = [], 0
        for start, end in self.finditer(text):
            pieces += [text[at:start], name]
            at = end
        return "".join(pieces) + text[at:] if pieces else text

    def _end(self, text: str, start: int, end: int) -> Optional[int]:
        if start and _continues_name(text[start - 1]):
            return None
        if self._defaulted:
            stop = end
            while stop < len(text) and _continues_name(text[stop]):
                stop += 1
            return stop + 1 if stop > end and text[stop : stop + 1] == ")" else None
        if end < len(text) and _is_word(text[end]):
            return None
        after = end
        while after < len(text) and text[after].isspace():
            after += 1
        return None if text.startswith(":=", after) else end


def _is_word(char: str) -> bool:
    # what ``\w`` matches in a str pattern
    return char.isalnum() or char == "_"


def _continues_name(char: str) -> bool:
    return char == "." or _is_word(char)
