"""The messages of CPython's pattern rules, word for word (3.10 to 3.13
agree), which checks.validate reports and the parse stage recognises."""

from __future__ import annotations

import re

__all__ = ["is_pattern_rule_message"]

MSG_NAME_CAPTURE = "name capture {!r} makes remaining patterns unreachable"
MSG_WILDCARD = "wildcard makes remaining patterns unreachable"
MSG_ALTERNATIVES = "alternative patterns bind different names"
MSG_DUPLICATE_NAME = "multiple assignments to name {!r} in pattern"
MSG_DEBUG = "cannot assign to __debug__"
MSG_STARS = "multiple starred names in sequence pattern"
MSG_KEY_KIND = "mapping pattern keys may only match literals and attribute lookups"
MSG_DUPLICATE_KEY = "mapping pattern checks duplicate key ({!r})"
MSG_VALUE_KIND = "patterns may only match literals and attribute lookups"
MSG_REPEATED_ATTR = "attribute name repeated in class pattern: {}"
MSG_REAL = "real number required in complex literal"
MSG_IMAGINARY = "imaginary number required in complex literal"
MSG_UNDERSCORE_TARGET = "cannot use '_' as a target"
MSG_INVALID_SYNTAX = "invalid syntax"

# Every message of the rules above, as a pattern: CPython's compile() on
# the tool's interpreter may report one of these first, but where it points
# depends on the CPython release, so the rules here report them instead.
_PATTERN_RULE_MESSAGES = re.compile(
    "|".join(
        re.escape(message)
        .replace(re.escape("{!r}"), ".*")
        .replace(re.escape("{}"), ".*")
        for message in (
            MSG_NAME_CAPTURE,
            MSG_WILDCARD,
            MSG_ALTERNATIVES,
            MSG_DUPLICATE_NAME,
            MSG_DEBUG,
            MSG_STARS,
            MSG_KEY_KIND,
            MSG_DUPLICATE_KEY,
            MSG_VALUE_KIND,
            MSG_REPEATED_ATTR,
        )
    )
)


def is_pattern_rule_message(msg: str) -> bool:
    """Is ``msg`` one of the compiler-stage errors the pattern rules report?"""
    return _PATTERN_RULE_MESSAGES.fullmatch(msg) is not None
