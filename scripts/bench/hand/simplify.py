"""Expression simplifier over node classes, written by hand for Python 3.9:
isinstance checks, then a branch per operator.

Same results as scripts/bench/fixtures/simplify.py. `run(n)` returns a checksum.
"""

from dataclasses import dataclass
from enum import Enum
from typing import Dict, List


class Op(Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    POW = "**"


class Expr:
    pass


@dataclass
class Num(Expr):
    value: int


@dataclass
class Var(Expr):
    name: str


@dataclass
class BinOp(Expr):
    op: Op
    left: Expr
    right: Expr


@dataclass
class Neg(Expr):
    operand: Expr


WORKLOAD = 600
MASK = 0xFFFFFFFF
OPS = [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.POW, Op.ADD, Op.MUL]
NAMES = ["x", "y", "z"]


def fold(op: Op, a: int, b: int) -> Expr:
    if op is Op.ADD:
        return Num((a + b) & MASK)
    if op is Op.SUB:
        return Num((a - b) & MASK)
    return Num((a * b) & MASK)


def rewrite(e: Expr) -> Expr:
    """One simplification step at the root of `e` (children already simplified)."""
    if isinstance(e, BinOp):
        op = e.op
        left = e.left
        right = e.right
        left_num = isinstance(left, Num)
        right_num = isinstance(right, Num)
        if op is Op.ADD:
            if left_num and left.value == 0:
                return right
            if right_num and right.value == 0:
                return left
            if left_num and right_num:
                return fold(op, left.value, right.value)
            if isinstance(right, Neg):
                return BinOp(Op.SUB, left, right.operand)
        elif op is Op.MUL:
            if (left_num and left.value == 0) or (right_num and right.value == 0):
                return Num(0)
            if left_num and left.value == 1:
                return right
            if right_num and right.value == 1:
                return left
            if left_num and right_num:
                return fold(op, left.value, right.value)
            if (
                left_num
                and isinstance(right, BinOp)
                and right.op is Op.MUL
                and isinstance(right.left, Num)
            ):
                return BinOp(
                    Op.MUL, Num((left.value * right.left.value) & MASK), right.right
                )
        elif op is Op.SUB:
            if right_num and right.value == 0:
                return left
            if (
                isinstance(left, Var)
                and isinstance(right, Var)
                and left.name == right.name
            ):
                return Num(0)
            if left_num and right_num:
                return fold(op, left.value, right.value)
        elif op is Op.DIV:
            if right_num and right.value == 1:
                return left
        elif op is Op.POW:
            if right_num:
                if right.value == 1:
                    return left
                if right.value == 0:
                    return Num(1)
        return e
    if isinstance(e, Neg):
        operand = e.operand
        if isinstance(operand, Neg):
            return operand.operand
        if isinstance(operand, Num):
            return Num(-operand.value & MASK)
    return e


def simplify(e: Expr) -> Expr:
    if isinstance(e, BinOp):
        return rewrite(BinOp(e.op, simplify(e.left), simplify(e.right)))
    if isinstance(e, Neg):
        return rewrite(Neg(simplify(e.operand)))
    return e


def evaluate(e: Expr, env: Dict[str, int]) -> int:
    if isinstance(e, Num):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Neg):
        return -evaluate(e.operand, env) & MASK
    if isinstance(e, BinOp):
        op = e.op
        left = evaluate(e.left, env)
        right = evaluate(e.right, env)
        if op is Op.ADD:
            return (left + right) & MASK
        if op is Op.SUB:
            return (left - right) & MASK
        if op is Op.MUL:
            return (left * right) & MASK
        if op is Op.DIV:
            return left // (right | 1)
        if op is Op.POW:
            return pow(left, right % 5, 1 << 32)
    raise TypeError(f"not an expression: {e!r}")


def size(e: Expr) -> int:
    if isinstance(e, BinOp):
        return 1 + size(e.left) + size(e.right)
    if isinstance(e, Neg):
        return 1 + size(e.operand)
    return 1


def make_expressions(count: int) -> List[Expr]:
    """Deterministic random trees (a linear congruential generator, not `random`)."""
    seed = 2024

    def draw(limit: int) -> int:
        nonlocal seed
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        return (seed >> 8) % limit

    def build(depth: int) -> Expr:
        pick = draw(10)
        if depth == 0 or pick < 3:
            return Num(draw(4)) if pick % 2 else Var(NAMES[draw(3)])
        if pick == 3:
            return Neg(build(depth - 1))
        return BinOp(OPS[draw(len(OPS))], build(depth - 1), build(depth - 1))

    return [build(5) for _ in range(count)]


def run(n: int) -> int:
    expressions = make_expressions(64)
    env = {"x": 3, "y": 7, "z": 11}
    checksum = 0
    for i in range(n):
        e = expressions[i % len(expressions)]
        s = simplify(e)
        checksum = (checksum * 31 + size(s) * 1009 + evaluate(s, env)) & MASK
    return checksum
