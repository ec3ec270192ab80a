"""A tree-walking evaluator and a constant-folding summary over `ast` nodes,
written by hand for Python 3.9: a test of `type(node)` per node class, the
attributes read directly, dicts from operator class to function.

Same results as scripts/bench/fixtures/astvisit.py on every version: 3.6 and
3.7 parse int literals as `ast.Num`, which is handled as well. `run(n)`
returns a checksum. The source is parsed once per `run`, its trees are
visited many times.
"""

import ast
import operator
import sys
from ast import (
    Add,
    And,
    Assign,
    AugAssign,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Constant,
    Eq,
    Expr,
    FloorDiv,
    For,
    FunctionDef,
    Gt,
    GtE,
    If,
    Lt,
    LtE,
    Mod,
    Mult,
    Name,
    NotEq,
    Pass,
    Return,
    Sub,
    UnaryOp,
    USub,
    While,
)
from typing import Any, Dict, List, Optional, Tuple

WORKLOAD = 40
MASK = 0xFFFFFFFF

Function = Tuple[List[str], List[ast.stmt]]

# 3.6 and 3.7 parse int literals as ast.Num (value in `.n`); from 3.8 on it
# is ast.Constant, tested first, so this never matches there.
NUM = ast.Num if sys.version_info < (3, 8) else Constant
LIST = ast.List

BINARY = {
    Add: operator.add,
    Sub: operator.sub,
    Mult: operator.mul,
    FloorDiv: operator.floordiv,
    Mod: operator.mod,
}
COMPARISONS = {
    Lt: operator.lt,
    LtE: operator.le,
    Gt: operator.gt,
    GtE: operator.ge,
    Eq: operator.eq,
    NotEq: operator.ne,
}
BUILTINS = frozenset(["len", "abs", "max", "min"])

SOURCE = """
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def digits(n):
    total = 0
    while n > 0:
        total += n % 10
        n = n // 10
    return total


def series(k):
    acc = 0
    for i in range(k):
        if i % 3 == 0 and i % 5 != 0:
            acc += i * i
        elif not i % 7:
            acc -= len([i, k, acc])
        else:
            acc = acc + digits(i) * (2 + 3) - 4 * 1
    return acc


def main(x, y):
    a = fib(x % 9)
    b = collatz(y)
    c = series(x % 12 + 1)
    if a > b or c <= 0:
        pass
    return max(a, b, c) - min(a, b) + abs(-c) + len([a, b]) * (10 - 2 * 3)
"""

# What execute returns when the statements ran to their end without `return`.
NOTHING = object()


def evaluate(
    node: ast.expr, env: Dict[str, Any], functions: Dict[str, Function]
) -> Any:
    kind = type(node)
    if kind is Name:
        return env[node.id]
    if kind is Constant:
        return node.value
    if kind is BinOp:
        return BINARY[type(node.op)](
            evaluate(node.left, env, functions), evaluate(node.right, env, functions)
        )
    if kind is Compare:
        return COMPARISONS[type(node.ops[0])](
            evaluate(node.left, env, functions),
            evaluate(node.comparators[0], env, functions),
        )
    if kind is Call:
        name = node.func.id
        args = node.args
        if name == "len":
            return len(evaluate(args[0], env, functions))
        if name == "abs":
            return abs(evaluate(args[0], env, functions))
        if name == "max":
            return max([evaluate(arg, env, functions) for arg in args])
        if name == "min":
            return min([evaluate(arg, env, functions) for arg in args])
        params, body = functions[name]
        frame = dict(zip(params, [evaluate(arg, env, functions) for arg in args]))
        return execute(body, frame, functions)
    if kind is BoolOp:
        if type(node.op) is And:
            result = True
            for value in node.values:
                result = evaluate(value, env, functions)
                if not result:
                    break
        else:
            result = False
            for value in node.values:
                result = evaluate(value, env, functions)
                if result:
                    break
        return result
    if kind is UnaryOp:
        operand = evaluate(node.operand, env, functions)
        if type(node.op) is USub:
            return -operand
        return not operand
    if kind is LIST:
        return [evaluate(item, env, functions) for item in node.elts]
    if kind is NUM:
        return node.n
    raise NotImplementedError(ast.dump(node))


def execute(
    statements: List[ast.stmt], env: Dict[str, Any], functions: Dict[str, Function]
) -> Any:
    for statement in statements:
        kind = type(statement)
        if kind is Assign:
            env[statement.targets[0].id] = evaluate(statement.value, env, functions)
        elif kind is AugAssign:
            name = statement.target.id
            if type(statement.op) is Add:
                env[name] += evaluate(statement.value, env, functions)
            else:
                env[name] -= evaluate(statement.value, env, functions)
        elif kind is If:
            if evaluate(statement.test, env, functions):
                result = execute(statement.body, env, functions)
            else:
                result = execute(statement.orelse, env, functions)
            if result is not NOTHING:
                return result
        elif kind is While:
            test = statement.test
            body = statement.body
            while evaluate(test, env, functions):
                result = execute(body, env, functions)
                if result is not NOTHING:
                    return result
        elif kind is For:
            name = statement.target.id
            body = statement.body
            for i in range(evaluate(statement.iter.args[0], env, functions)):
                env[name] = i
                result = execute(body, env, functions)
                if result is not NOTHING:
                    return result
        elif kind is Return:
            value = statement.value
            return None if value is None else evaluate(value, env, functions)
        elif kind is Expr:
            evaluate(statement.value, env, functions)
        elif kind is not Pass:
            raise NotImplementedError(ast.dump(statement))
    return NOTHING


def constant(node: ast.expr) -> Optional[int]:
    """The value of an expression of int literals only, else None."""
    kind = type(node)
    if kind is Constant:
        value = node.value
        return value if isinstance(value, int) else None
    if kind is BinOp:
        a = constant(node.left)
        if a is None:
            return None
        b = constant(node.right)
        if b is None:
            return None
        op = type(node.op)
        if op is Add:
            return a + b
        if op is Sub:
            return a - b
        if op is Mult:
            return a * b
        if op is FloorDiv:
            return None if b == 0 else a // b
        if op is Mod:
            return None if b == 0 else a % b
        return None
    if kind is UnaryOp:
        if type(node.op) is USub:
            value = constant(node.operand)
            return None if value is None else -value
        return None
    if kind is NUM:
        return node.n
    return None


def summarize(node: ast.AST, counts: List[int]) -> None:
    """counts: [nodes, names read, calls, foldable subexpressions, their sum]."""
    counts[0] += 1
    kind = type(node)
    if kind is Name:
        counts[1] += 1
        return
    if kind is Constant or kind is NUM:
        return
    if kind is BinOp:
        value = constant(node)
        if value is not None:
            counts[3] += 1
            counts[4] = (counts[4] + value) & MASK
            return
        children: List[ast.AST] = [node.left, node.right]
    elif kind is Call:
        func = node.func
        if type(func) is Name and func.id in BUILTINS:
            counts[2] += 1
            children = node.args
        else:
            counts[2] += 2
            children = [func] + node.args
    elif kind is FunctionDef:
        children = node.body
    elif kind is For:
        children = [] if node.orelse else node.body
    elif kind is If or kind is While:
        children = [node.test] + node.body + node.orelse
    elif kind is Compare:
        children = [node.left] + node.comparators
    elif kind is BoolOp:
        children = node.values
    elif kind is LIST:
        children = node.elts
    elif kind is UnaryOp:
        children = [node.operand]
    elif kind is Assign:
        targets = node.targets
        children = [targets[0], node.value] if len(targets) == 1 else []
    elif kind is AugAssign:
        children = [node.target, node.value]
    elif kind is Return:
        value = node.value
        children = [] if value is None else [value]
    elif kind is Expr:
        children = [node.value]
    else:
        children = []
    for child in children:
        summarize(child, counts)


def run(n: int) -> int:
    tree = ast.parse(SOURCE)
    functions: Dict[str, Function] = {}
    definitions: List[ast.FunctionDef] = []
    for statement in tree.body:
        if type(statement) is FunctionDef:
            params = [param.arg for param in statement.args.args]
            functions[statement.name] = (params, statement.body)
            definitions.append(statement)
    params, body = functions["main"]
    seed = 99
    checksum = 0
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        x = (seed >> 8) % 1000 + 1
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        y = (seed >> 8) % 100 + 1
        result = execute(body, dict(zip(params, [x, y])), functions)
        counts = [0, 0, 0, 0, 0]
        for definition in definitions:
            summarize(definition, counts)
        checksum = (checksum * 31 + result) & MASK
        for count in counts:
            checksum = (checksum * 17 + count) & MASK
    return checksum
