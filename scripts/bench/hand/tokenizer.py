"""A tokenizer for a small statement language, written by hand for Python
3.9: frozensets of characters for the one-character tests, a slice for the
two-character operators, a dict from word to token kind for the keywords.

Same results as scripts/bench/fixtures/tokenizer.py. `run(n)` returns a checksum.
"""

from typing import List, Tuple

WORKLOAD = 45
MASK = 0xFFFFFFFF

Token = Tuple[str, str, int]

# What `run` folds into the checksum for each token kind.
KIND_CODES = {
    "NAME": 1,
    "NUMBER": 2,
    "STRING": 3,
    "OP": 4,
    "KEYWORD": 5,
    "BOOL": 6,
    "NIL": 7,
    "NEWLINE": 8,
    "ERROR": 9,
    "TYPE": 10,
}


WHITESPACE = frozenset(" \t\r")
PUNCTUATION = frozenset("()[]{},;.")
OPERATOR_START = frozenset("=!<>+-*/%:")
TWO_CHAR_OPERATORS = frozenset(["==", "!=", "<=", ">=", "->", "**"])
DIGITS = frozenset("0123456789")
WORD_KINDS = {
    "let": "KEYWORD",
    "fn": "KEYWORD",
    "return": "KEYWORD",
    "if": "KEYWORD",
    "else": "KEYWORD",
    "while": "KEYWORD",
    "for": "KEYWORD",
    "in": "KEYWORD",
    "break": "KEYWORD",
    "continue": "KEYWORD",
    "and": "KEYWORD",
    "or": "KEYWORD",
    "not": "KEYWORD",
    "true": "BOOL",
    "false": "BOOL",
    "nil": "NIL",
    "int": "TYPE",
    "str": "TYPE",
    "bool": "TYPE",
    "list": "TYPE",
}


def tokenize(text: str) -> List[Token]:
    tokens: List[Token] = []
    i = 0
    line = 1
    end = len(text)
    while i < end:
        ch = text[i]
        if ch in WHITESPACE:
            i += 1
        elif ch == "\n":
            tokens.append(("NEWLINE", ch, line))
            line += 1
            i += 1
        elif ch == "#":
            while i < end and text[i] != "\n":
                i += 1
        elif ch in PUNCTUATION:
            tokens.append(("OP", ch, line))
            i += 1
        elif ch in OPERATOR_START:
            two = text[i : i + 2]
            if two in TWO_CHAR_OPERATORS:
                tokens.append(("OP", two, line))
                i += 2
            elif ch == "!":
                tokens.append(("ERROR", ch, line))
                i += 1
            else:
                tokens.append(("OP", ch, line))
                i += 1
        elif ch == '"' or ch == "'":
            start = i
            i += 1
            while i < end and text[i] != ch:
                if text[i] == "\\":
                    i += 1
                i += 1
            i += 1
            tokens.append(("STRING", text[start:i], line))
        elif ch in DIGITS:
            start = i
            while i < end and (text[i].isdigit() or text[i] == "_"):
                i += 1
            if i + 1 < end and text[i] == "." and text[i + 1].isdigit():
                i += 1
                while i < end and text[i].isdigit():
                    i += 1
            tokens.append(("NUMBER", text[start:i], line))
        elif ch.isalpha() or ch == "_":
            start = i
            while i < end and (text[i].isalnum() or text[i] == "_"):
                i += 1
            word = text[start:i]
            tokens.append((WORD_KINDS.get(word, "NAME"), word, line))
        else:
            tokens.append(("ERROR", ch, line))
            i += 1
    return tokens


NAMES = ["x", "total", "count", "item", "values", "i", "limit", "_tmp", "result2"]
OPERATORS = ["+", "-", "*", "/", "%", "**", "==", "!=", "<", "<=", ">", ">="]


def make_program(seed: int, statements: int) -> str:
    """Source text built from templates (a deterministic linear congruential
    generator picks, not `random`)."""

    def draw(limit: int) -> int:
        nonlocal seed
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        return (seed >> 8) % limit

    def name() -> str:
        return NAMES[draw(len(NAMES))]

    def operand() -> str:
        pick = draw(6)
        if pick == 0:
            return str(draw(1000))
        if pick == 1:
            return str(draw(100)) + "." + str(draw(100))
        if pick == 2:
            return "f(" + name() + ", " + str(draw(10)) + ")"
        if pick == 3:
            return "[" + name() + ", " + name() + "]"
        return name()

    def expression() -> str:
        text = operand()
        for _ in range(draw(4)):
            text += " " + OPERATORS[draw(len(OPERATORS))] + " " + operand()
        return text

    lines = ["fn f(a: int, b: int) -> int {", "    return a * b + 1;", "}"]
    depth = 0
    for _ in range(statements):
        indent = "    " * depth
        pick = draw(10)
        if pick < 3:
            lines.append(indent + "let " + name() + " = " + expression() + ";")
        elif pick == 3:
            lines.append(indent + name() + " = " + expression() + ";  # update")
        elif pick == 4 and depth < 3:
            lines.append(indent + "if " + expression() + " and not done {")
            depth += 1
        elif pick == 5 and depth < 3:
            lines.append(indent + "while " + name() + " < limit or false {")
            depth += 1
        elif pick == 6 and depth < 3:
            lines.append(indent + "for " + name() + " in values {")
            depth += 1
        elif pick == 7:
            lines.append(indent + 'print("value: ", ' + name() + ", 'it\\'s');")
        elif pick == 8 and depth > 0:
            depth -= 1
            lines.append("    " * depth + "} else {")
            depth += 1
        elif depth > 0:
            depth -= 1
            lines.append("    " * depth + "}")
        else:
            lines.append("\tlet ok: bool = true; let none = nil; break; continue;")
    while depth > 0:
        depth -= 1
        lines.append("    " * depth + "}")
    lines.append("return result2 $ @;")
    return "\n".join(lines) + "\n"


def run(n: int) -> int:
    programs = [make_program(seed, 60) for seed in (7, 11, 13, 17)]
    checksum = 0
    for i in range(n):
        tokens = tokenize(programs[i % len(programs)])
        checksum = (checksum * 31 + len(tokens)) & MASK
        for kind, text, line in tokens:
            checksum = (checksum * 17 + KIND_CODES[kind] * 64 + len(text)) & MASK
        checksum = (checksum + tokens[-1][2]) & MASK
    return checksum
