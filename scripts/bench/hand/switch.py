"""A switch over many literals, written by hand for Python 3.9: an if/elif
chain over the int opcodes, a dict lookup for the str keywords.

Same results as scripts/bench/fixtures/switch.py. `run(n)` returns a checksum.
"""

from typing import List

WORKLOAD = 300
MASK = 0xFFFFFFFF


def execute(code: List[int]) -> int:
    a = 1
    b = 2
    for op in code:
        if op == 0:
            a += 1
        elif op == 1:
            a -= 1
        elif op == 2:
            a += b
        elif op == 3:
            a -= b
        elif op == 4:
            a *= 3
        elif op == 5:
            a, b = b, a
        elif op == 6:
            b = a
        elif op == 7:
            b += 1
        elif op == 8:
            a ^= b
        elif op == 9:
            a |= 1
        elif op == 10:
            a &= b
        elif op == 11:
            a <<= 1
        elif op == 12:
            a >>= 1
        elif op == 13:
            b >>= 1
        elif op == 14:
            a = -a
        elif op == 15:
            a %= 1009
        elif op == 16:
            b = b * 5 + 1
        elif op == 17:
            a = max(a, b)
        elif op == 18:
            a = min(a, b)
        elif op == 19:
            a = abs(a)
        elif op == 20:
            a = a * a % 65521
        elif op == 21:
            b -= a
        elif op == 22:
            a += 7
        elif op != 23:
            b ^= op
        a &= MASK
        b &= MASK
    return a ^ b


KEYWORDS = {
    "if": 1,
    "elif": 2,
    "else": 3,
    "for": 4,
    "while": 5,
    "break": 6,
    "continue": 7,
    "def": 8,
    "return": 9,
    "class": 10,
    "import": 11,
    "from": 11,
    "try": 12,
    "except": 13,
    "finally": 13,
    "raise": 14,
    "with": 15,
    "as": 15,
    "lambda": 16,
    "yield": 17,
    "global": 18,
    "nonlocal": 18,
    "pass": 19,
    "and": 20,
    "or": 20,
    "not": 20,
    "in": 21,
    "is": 21,
    "True": 22,
    "False": 22,
    "None": 22,
    "assert": 23,
    "del": 24,
}


def keyword_value(word: str) -> int:
    return KEYWORDS.get(word, 0)


WORDS = (
    "def run ( n ) : for i in range ( n ) : if i is None or not i : continue "
    "elif i > 3 and x : yield i else : return lambda y : y from x import y as z "
    "class A : pass while True : break try : raise E except E as e : del e "
    "finally : assert False with f as g : global q nonlocal r"
).split()


def make_code(length: int) -> List[int]:
    seed = 99
    code = []
    for _ in range(length):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        code.append((seed >> 10) % 26)
    return code


def run(n: int) -> int:
    code = make_code(500)
    words = WORDS
    checksum = 0
    for i in range(n):
        checksum = (checksum * 31 + execute(code)) & MASK
        for word in words:
            checksum += keyword_value(word)
        checksum += i
    return checksum & MASK
