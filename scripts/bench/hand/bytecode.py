"""A stack-machine interpreter, written by hand for Python 3.9: the opcode
(the tuple's first item) is read once and tested in an if/elif chain, its
operands are read by index.

Same results as scripts/bench/fixtures/bytecode.py. `run(n)` returns a checksum.
"""

from typing import Dict, List, Tuple

WORKLOAD = 60
MASK = 0xFFFFFFFF

Instr = Tuple
Function = Tuple[Tuple[str, ...], List[Instr]]

# Assembly: one tuple per instruction; ("LABEL", name) marks a jump target,
# jumps name their label until `assemble` replaces it with an index.
SOURCES = {
    "fib": (
        ("n",),
        [
            ("LOAD", "n"),
            ("PUSH", 2),
            ("COMPARE", "<"),
            ("JUMP_IF_FALSE", "recurse"),
            ("LOAD", "n"),
            ("RETURN",),
            ("LABEL", "recurse"),
            ("LOAD", "n"),
            ("PUSH", 1),
            ("SUB",),
            ("CALL", "fib", 1),
            ("LOAD", "n"),
            ("PUSH", 2),
            ("SUB",),
            ("CALL", "fib", 1),
            ("ADD",),
            ("RETURN",),
        ],
    ),
    "gcd": (
        ("a", "b"),
        [
            ("LABEL", "loop"),
            ("LOAD", "b"),
            ("PUSH", 0),
            ("COMPARE", "=="),
            ("JUMP_IF_TRUE", "done"),
            ("LOAD", "a"),
            ("LOAD", "b"),
            ("MOD",),
            ("LOAD", "b"),
            ("STORE", "a"),
            ("STORE", "b"),
            ("JUMP", "loop"),
            ("LABEL", "done"),
            ("LOAD", "a"),
            ("RETURN",),
        ],
    ),
    "collatz": (
        ("n",),
        [
            ("PUSH", 0),
            ("STORE", "steps"),
            ("LABEL", "loop"),
            ("LOAD", "n"),
            ("PUSH", 1),
            ("COMPARE", "!="),
            ("JUMP_IF_FALSE", "done"),
            ("LOAD", "n"),
            ("PUSH", 2),
            ("MOD",),
            ("JUMP_IF_TRUE", "odd"),
            ("LOAD", "n"),
            ("PUSH", 2),
            ("DIV",),
            ("STORE", "n"),
            ("JUMP", "next"),
            ("LABEL", "odd"),
            ("LOAD", "n"),
            ("PUSH", 3),
            ("MUL",),
            ("PUSH", 1),
            ("ADD",),
            ("STORE", "n"),
            ("LABEL", "next"),
            ("INC", "steps", 1),
            ("JUMP", "loop"),
            ("LABEL", "done"),
            ("LOAD", "steps"),
            ("RETURN",),
        ],
    ),
    "sum_squares": (
        ("k",),
        [
            ("PUSH", 0),
            ("STORE", "total"),
            ("PUSH", 0),
            ("STORE", "i"),
            ("LABEL", "loop"),
            ("LOAD", "i"),
            ("LOAD", "k"),
            ("COMPARE", "<"),
            ("JUMP_IF_FALSE", "done"),
            ("LOAD", "i"),
            ("DUP",),
            ("MUL",),
            ("PUSH", 7),
            ("MOD",),
            ("LOAD", "total"),
            ("ADD",),
            ("STORE", "total"),
            ("INC", "i", 1),
            ("JUMP", "loop"),
            ("LABEL", "done"),
            ("LOAD", "total"),
            ("LOAD", "i"),
            ("CALL", "gcd", 2),
            ("RETURN",),
        ],
    ),
    "main": (
        ("x", "y"),
        [
            ("LOAD", "x"),
            ("PUSH", 9),
            ("MOD",),
            ("CALL", "fib", 1),
            ("LOAD", "x"),
            ("LOAD", "y"),
            ("CALL", "gcd", 2),
            ("LOAD", "y"),
            ("CALL", "collatz", 1),
            ("LOAD", "x"),
            ("PUSH", 40),
            ("MOD",),
            ("CALL", "sum_squares", 1),
            ("ADD",),
            ("ADD",),
            ("SUB",),
            ("DUP",),
            ("PUSH", 0),
            ("COMPARE", ">="),
            ("JUMP_IF_TRUE", "positive"),
            ("NEG",),
            ("LABEL", "positive"),
            ("PRINT",),
            ("RETURN",),
        ],
    ),
}


def assemble(code: List[Instr]) -> List[Instr]:
    """Drop the labels and replace each jump's label by an instruction index."""
    labels: Dict[str, int] = {}
    out: List[Instr] = []
    for instr in code:
        if instr[0] == "LABEL":
            labels[instr[1]] = len(out)
        else:
            out.append(instr)
    return [
        (instr[0], labels[instr[1]]) if instr[0].startswith("JUMP") else instr
        for instr in out
    ]


def execute(
    functions: Dict[str, Function], entry: str, args: List[int], output: List[int]
) -> Tuple[int, int]:
    """Run `entry` with `args`: (its result, the number of instructions run)."""
    params, code = functions[entry]
    local: Dict[str, int] = dict(zip(params, args))
    stack: List[int] = []
    frames: List[Tuple[List[Instr], int, Dict[str, int]]] = []
    pc = 0
    steps = 0
    while True:
        instr = code[pc]
        pc += 1
        steps += 1
        op = instr[0]
        if op == "LOAD":
            stack.append(local[instr[1]])
        elif op == "STORE":
            local[instr[1]] = stack.pop()
        elif op == "PUSH":
            stack.append(instr[1])
        elif op == "POP":
            stack.pop()
        elif op == "DUP":
            stack.append(stack[-1])
        elif op == "SWAP":
            stack[-1], stack[-2] = stack[-2], stack[-1]
        elif op == "INC":
            local[instr[1]] += instr[2]
        elif op == "ADD":
            right = stack.pop()
            stack[-1] += right
        elif op == "SUB":
            right = stack.pop()
            stack[-1] -= right
        elif op == "MUL":
            right = stack.pop()
            stack[-1] *= right
        elif op == "DIV":
            right = stack.pop()
            stack[-1] //= right
        elif op == "MOD":
            right = stack.pop()
            stack[-1] %= right
        elif op == "NEG":
            stack[-1] = -stack[-1]
        elif op == "COMPARE":
            right = stack.pop()
            left = stack[-1]
            test = instr[1]
            if test == "<":
                stack[-1] = int(left < right)
            elif test == "<=":
                stack[-1] = int(left <= right)
            elif test == ">":
                stack[-1] = int(left > right)
            elif test == ">=":
                stack[-1] = int(left >= right)
            elif test == "==":
                stack[-1] = int(left == right)
            elif test == "!=":
                stack[-1] = int(left != right)
            else:
                raise ValueError(f"bad instruction at {pc - 1}: {instr!r}")
        elif op == "JUMP":
            pc = instr[1]
        elif op == "JUMP_IF_FALSE":
            if not stack.pop():
                pc = instr[1]
        elif op == "JUMP_IF_TRUE":
            if stack.pop():
                pc = instr[1]
        elif op == "CALL":
            frames.append((code, pc, local))
            params, code = functions[instr[1]]
            argc = instr[2]
            local = dict(zip(params, stack[len(stack) - argc :]))
            del stack[len(stack) - argc :]
            pc = 0
        elif op == "RETURN":
            if not frames:
                return stack.pop(), steps
            code, pc, local = frames.pop()
        elif op == "PRINT":
            output.append(stack[-1])
        elif op == "HALT":
            return stack[-1] if stack else 0, steps
        else:
            raise ValueError(f"bad instruction at {pc - 1}: {instr!r}")


def run(n: int) -> int:
    functions = {
        name: (params, assemble(code)) for name, (params, code) in SOURCES.items()
    }
    seed = 12345
    output: List[int] = []
    checksum = 0
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        x = (seed >> 8) % 1000 + 1
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        y = (seed >> 8) % 300 + 1
        result, steps = execute(functions, "main", [x, y], output)
        checksum = (checksum * 31 + result * 7 + steps) & MASK
    for value in output[-50:]:
        checksum = (checksum * 31 + value) & MASK
    return (checksum + len(output)) & MASK
