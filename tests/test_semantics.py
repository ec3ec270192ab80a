"""Differential tests: each program runs natively on CPython 3.10 and transpiled
on 3.9/3.8; what it prints (and raises, and where) must be the same.

Every item of /work/shared/SEMANTICS.md has at least one program here. The
programs print observations rather than assert, so a difference shows up as a
diff of the two outputs. `dt` is the helper module from tests/difftest.py
(instrumented Sequence/Mapping/property objects that print each call made on
them, `dt.ev` to count evaluations, `dt.names` to list user names).
"""

from __future__ import annotations

import re
from typing import Any, Dict, Tuple

import pytest

from difftest import (
    EXTRA_ORACLE_VERSIONS,
    ORACLE_VERSION,
    TARGET_VERSIONS,
    Program,
    cached_native,
    cached_transpiled,
    dedent,
    explain_mismatch,
    explain_oracle_disagreement,
)
from interpreters import find_interpreter, require_interpreter

# Differential batches (every program on every target): out of the fast loop.
pytestmark = pytest.mark.slow

PROGRAMS: list[Program] = []


def prog(name: str, source: str, **flags: Any) -> None:
    if flags.pop("trace", False):
        # Two checks: the exact events, and the lines a debugger stops at.
        PROGRAMS.append(
            Program(name + "-exact", dedent(source), trace="exact", **flags)
        )
        PROGRAMS.append(
            Program(name + "-user-lines", dedent(source), trace="user-lines", **flags)
        )
        return
    PROGRAMS.append(Program(name, dedent(source), **flags))


# ---------------------------------------------------------------------------
# Evaluation order and bindings
# ---------------------------------------------------------------------------

prog(
    "subject-evaluated-once",
    """
    import dt
    def f(v):
        match dt.ev("subject", v):
            case [1, x]:
                print("first", x)
            case [2, x] if dt.ev("guard", x > 0):
                print("second", x)
            case {"k": x}:
                print("third", x)
            case _:
                print("default")
    for v in ([1, 5], [2, -1], [2, 3], {"k": 0}, 42):
        f(v)
    """,
)

prog(
    "subject-evaluated-once-no-case-matches",
    """
    import dt
    calls = []
    def subject():
        calls.append(1)
        return 7
    def f():
        match subject():
            case 1:
                print("one")
            case [x]:
                print("list")
            case str():
                print("str")
        print("after", len(calls))
    f()
    """,
)

prog(
    "first-matching-case-only-no-fallthrough",
    """
    def f(v):
        match v:
            case int():
                print("int")
            case 1:
                print("one")
            case object():
                print("object")
        print("done")
    f(1); f("x")
    """,
)

prog(
    "tuple-subject-match-a-b",
    """
    def f(a, b):
        match a, b:
            case (1, y):
                print("tuple pattern", y)
            case [2, y]:
                print("list pattern", y)
            case 3, 4:
                print("bare tuple pattern")
            case whole:
                print("whole", type(whole).__name__, whole)
    f(1, "a"); f(2, "b"); f(3, 4); f(5, 6)
    """,
)

prog(
    "star-subject-match-star-xs-y",
    """
    def f(xs, y):
        match *xs, y:
            case [a, b, c]:
                print("three", a, b, c)
            case (first, *rest):
                print("first/rest", first, type(rest).__name__, rest)
        match *xs, y, *xs:
            case whole:
                print(type(whole).__name__, whole)
    f([1, 2], 3); f([], 9); f((5,), 6)
    """,
)

prog(
    "captures-stored-only-when-whole-pattern-matched",
    """
    import dt
    def f(v):
        x = y = "old"
        match v:
            case [x, 2]:
                print("A", x)
            case [x, y, 3] | [y, x, 4]:
                print("B", x, y)
            case {"a": x, "b": 2}:
                print("C", x)
            case (1, (x, 5)):
                print("D", x)
        print("after", x, y)
    for v in ([1, 9], [1, 2], [7, 8, 9], [7, 8, 4], {"a": 1, "b": 3}, (1, (2, 6)), (1, (2, 5))):
        f(v)
    """,
)

prog(
    "captures-class-pattern-partial-failure",
    """
    from dataclasses import dataclass
    @dataclass
    class P:
        x: int
        y: int
    def f(v):
        a = b = "old"
        match v:
            case P(x=a, y=0):
                print("A", a)
            case P(a, b) if b > 100:
                print("B", a, b)
        print("after", a, b)
    f(P(1, 0)); f(P(1, 2)); f(P(3, 200))
    """,
)

prog(
    "guard-runs-after-captures-failing-guard-leaves-them-bound",
    """
    import dt
    def f(v):
        match v:
            case [x, y] if dt.ev("guard1", print("in guard", x, y) or x > y):
                print("body1", x, y)
            case [z, *_] if dt.ev("guard2", z == 0):
                print("body2")
            case _:
                print("fallback", sorted(k for k in locals() if k != "v"))
                print(x if "x" in locals() else "-", z if "z" in locals() else "-")
    f([5, 1]); f([1, 5]); f([0])
    """,
)

prog(
    "guard-evaluated-once-per-tried-case-with-or-alternatives",
    """
    import dt
    def f(v):
        match v:
            case [1, x] | [x, 1] if dt.ev("guard", x == 99):
                print("A", x)
            case 1 | 2 | 3 if dt.ev("guard-lit", False):
                print("B")
            case _:
                print("default")
    f([1, 1]); f(2); f([1, 99]); f([99, 1])
    """,
)

prog(
    "guard-with-boolean-operators-needs-parentheses",
    """
    def f(v):
        match v:
            case [1, x] if x == 1 or True:
                print("A", v)
            case 3 if False or True:
                print("B", v)
            case str() if not v or v == "z":
                print("C", v)
            case int(n) if n > 10 and n < 20 or n == 99:
                print("D", v)
            case _:
                print("none", v)
    for v in (5, [1, 2], 3, 4, "", "a", "z", 15, 99, 25):
        f(v)
    """,
)

prog(
    "guard-walrus-not-hoisted",
    """
    import dt
    def f(v):
        match v:
            case 1 if (t := dt.ev("guard-walrus", 2)):
                print("one", t)
            case [x] if (double := x * 2) > 3:
                print("double", double)
            case _:
                pass
        print(sorted(k for k in locals() if k != "v"))
    f(0); f(1); f([1]); f([5])
    """,
)

prog(
    "guard-can-see-and-rebind-captures",
    """
    def f(v):
        match v:
            case [x, y] if (x := x + y) > 10:
                print("big", x, y)
            case [x, y]:
                print("small", x, y)
    f([5, 9]); f([1, 2])
    """,
)

prog(
    "guard-comprehension-and-lambda-close-over-captures",
    """
    def f(v):
        match v:
            case [x, *rest] if any(x == r for r in rest):
                print("repeat", x)
            case [x, *rest] if (lambda: x)() == 0:
                print("zero head", rest)
            case [x, *_]:
                fs = [lambda: x * 2]
                print("other", fs[0]())
    f([1, 2, 1]); f([0, 5]); f([3, 4])
    """,
)

# ---------------------------------------------------------------------------
# No helper names: locals(), class bodies, module globals
# ---------------------------------------------------------------------------

prog(
    "locals-in-body-simple-first-statement",
    """
    import dt
    def f(v):
        match v:
            case [a, b]:
                print("A", dt.dump(locals()))
            case {"k": c}:
                print("B", dt.dump(locals()))
            case int(d) if d > 0:
                print("C", dt.dump(locals()))
            case _:
                print("D", dt.dump(locals()))
    f([1, 2]); f({"k": 3}); f(4); f(-4)
    """,
)

prog(
    "locals-in-body-compound-first-statement",
    """
    import dt
    def f(v):
        match v:
            case [a, b]:
                if a:
                    print("if", dt.names(locals()))
                else:
                    print("else", dt.names(locals()))
            case (a, b, c):
                for i in range(1):
                    print("for", dt.names(locals()))
            case {"k": c}:
                with open(__import__("os").devnull) as fh:
                    print("with", dt.names(locals()))
            case str(s):
                try:
                    print("try", dt.names(locals()))
                finally:
                    pass
            case _:
                while True:
                    print("while", dt.names(locals()))
                    break
    f([1, 2]); f([0, 2]); f((1, 2, 3)); f({"k": 1}); f("s"); f(None)
    """,
)

prog(
    "locals-after-statement-matched-and-unmatched",
    """
    import dt
    def f(v):
        match v:
            case [a, b]:
                pass
            case {"a": c, **rest}:
                pass
            case 42 | 43 as answer:
                pass
        print(dt.dump(locals()))
    f([1, 2]); f({"a": 1, "z": 2}); f(43); f("nothing")
    """,
)

prog(
    "locals-with-shared-kind-of-a-local-subject",
    """
    import dt
    def f(state, event):
        match state, event:
            case "a", [x]:
                print("A", dt.dump(locals()))
            case "b", [x, y]:
                print("B", dt.dump(locals()))
            case _, [*rest]:
                print("C", dt.dump(locals()))
            case _, {"k": v}:
                print("D", dt.dump(locals()))
            case _:
                print("E", dt.dump(locals()))
    for event in ([1], [1, 2], (3,), "xy", {"k": 0}, dt.LogSeq([5]), dt.LogMap({"k": 1})):
        f("a", event); f("b", event)
    """,
)

prog(
    "locals-shared-kind-not-exhaustive-or-compound-body",
    """
    import dt
    def f(v):
        match v:
            case [x]:
                print("A", dt.dump(locals()))
            case [x, y]:
                print("B", dt.dump(locals()))
            case [*rest]:
                print("C", dt.dump(locals()))
        print("after", dt.dump(locals()))
    def g(v):
        match v:
            case [x]:
                for i in range(1):
                    print("A", dt.dump(locals()))
            case [x, y]:
                print("B", dt.dump(locals()))
            case [*rest]:
                print("C", dt.dump(locals()))
            case _:
                print("D", dt.dump(locals()))
    for v in ([1], [1, 2], (1, 2, 3), "s", 0):
        f(v); g(v)
    """,
)

prog(
    "locals-in-return-bodies",
    # A body that returns without a call keeps its temporaries (the frame
    # ends); one that calls, or sits in a try/with whose code runs after
    # the return, deletes them first.
    """
    import dt
    def plain(v):
        match v[0], v[1:]:
            case 1, [x]:
                return x
            case 2, _:
                return dt.dump(locals())
            case _, [*rest] if len(rest) > 1:
                return [name for name in locals()]
            case _:
                return v and locals()
    def guarded(v):
        try:
            match v[0], v[1:]:
                case 1, [x]:
                    return x
                case _:
                    return 0
        finally:
            print("finally", dt.dump(locals()))
    class Exit:
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            print("exit", dt.names(__import__("sys")._getframe(1).f_locals))
    def within(v):
        with Exit():
            match v[0], v[1:]:
                case 1, [x]:
                    return x
                case _:
                    return -1
    for v in ([1, 5], [2, 3], [3, 4, 5], [4], [0, 1, 2]):
        print(plain(v), guarded(v), within(v))
    """,
)

prog(
    "value-under-a-shared-key",
    # ``type`` is looked up once per match, on the match line: missing keys,
    # None values, non-mappings, a user mapping and a value whose __eq__
    # answers everything must still pick CPython's case.
    """
    import dt
    class Any:
        def __eq__(self, other):
            return True
        __hash__ = None
    class Accepting(type):
        def __instancecheck__(cls, value):
            return True
    class Anything(metaclass=Accepting):
        pass
    def f(event):
        match event:
            case {"type": "click", "x": int(x)}:
                return "click", x
            case {"type": "key", "key": str(key)} if key:
                return "key", key
            case {"type": None}:
                return "none"
            case {"type": Anything()} if event.get("type") == "any":
                return "anything"
            case {"type": [*items]}:
                return "items", items
            case {"type": str(kind), **rest}:
                return "kind", kind, sorted(rest)
            case {"other": 1}:
                return "other"
            case _:
                return "fallback"
    for event in (
        {"type": "click", "x": 1}, {"type": "click", "x": "1"}, {"type": "key", "key": ""},
        {"type": "key", "key": "k"}, {"type": None}, {}, {"other": 1}, {"type": [1, 2]},
        {"type": Any()}, {"type": "t", "a": 1}, [("type", "click")], "type", None,
        dt.LogMap({"type": "click", "x": 3}), dt.LogMap({"other": 1}), {"type": "any"},
    ):
        print(f(event))
    """,
)

prog(
    "shared-length-of-a-sequence-is-not-a-mapping-length",
    """
    class K:
        A = "a"
    def f(v):
        match v.copy():
            case [x]:
                return "seq", x
            case {K.A: x}:
                return "map", x
            case _:
                return "other"
    print(f({"a": 1}), f([1]), f({}), f([]))
    """,
)

prog(
    "literal-alternatives-under-a-missing-key-or-attribute",
    """
    class A:
        pass
    def f(v):
        match v:
            case {"k": "a" | "b" as x}:
                return "key", x
            case A(n=1 | 2 as n):
                return "attr", n
            case _:
                return "other"
    a = A()
    print(f({}), f({"k": None}), f({"k": "b"}), f(a))
    a.n = None
    print(f(a))
    a.n = 2
    print(f(a))
    """,
)

prog(
    "shared-kind-of-the-common-builtin-types",
    """
    import array, collections
    def f(v):
        match v:
            case [x, *_]:
                return "sequence", x
            case []:
                return "empty"
            case {"k": x}:
                return "mapping", x
            case {}:
                return "other mapping"
            case _:
                return "neither"
    for v in ([1], (2,), [], (), {"k": 3}, {}, "ab", b"ab", bytearray(b"ab"),
              1, 1.5, True, None, array.array("b", [4]), collections.deque([5]),
              collections.OrderedDict(k=6), range(7, 8), memoryview(b"x")):
        print(type(v).__name__, f(v))
    """,
)

prog(
    "first-item-read-once-for-a-verb-dispatch",
    """
    import dt
    def f(words):
        match dt.LogSeq(words):
            case []:
                return "nothing", dt.names(locals())
            case ["go", d] | ["walk", d]:
                return "go", d, dt.names(locals())
            case ["look", "_spam_first[0]"]:
                return "literal"
            case ["take", *things] if things:
                return "take", things
            case [("a" | "b") as letter, *rest]:
                return letter, rest
            case [verb, *_]:
                return "verb", verb
    for words in ([], ["go", "n"], ["walk", "s"], ["look", "_spam_first[0]"],
                  ["take"], ["take", "x", "y"], ["b", 1], ["jump", 2, 3]):
        print(f(words))
    """,
)

prog(
    "locals-second-case-after-failed-first",
    """
    import dt
    def f(v):
        match v:
            case [1, x, 3]:
                print("one")
            case [y, z, *w]:
                print(dt.dump(locals()))
    f([1, 2, 4])
    """,
)

prog(
    "locals-in-nested-function-body",
    """
    import dt
    def outer():
        def inner(v):
            match v:
                case (p, q):
                    return dt.names(locals())
                case _:
                    return dt.names(locals())
        return inner((1, 2)), inner(0)
    print(outer())
    """,
)

prog(
    "class-body-match-no-stray-attributes",
    """
    import dt
    class A:
        match [1, 2]:
            case [first, second]:
                both = first + second
            case _:
                none = True
    class B:
        match "x":
            case [first, second]:
                both = 1
            case str(s) if len(s) > 3:
                long = s
    class C:
        match {"k": 5, "z": 6}:
            case {"k": k, **others}:
                inside = dt.names(locals())
    print(dt.dump(vars(A)))
    print(dt.dump(vars(B)))
    print(dt.dump(vars(C)))
    """,
)

prog(
    "class-body-capture-uses-class-scope-in-guard",
    """
    import dt
    class K:
        limit = 3
        match 5:
            case n if n > limit:
                big = True
    print(dt.dump(vars(K)))
    """,
)

prog(
    "module-globals-matched",
    """
    import dt
    before = dt.names(globals())
    match {"a": [1, 2, 3]}:
        case {"a": [x, *ys]}:
            print("in body", dt.names(globals()))
    print("added", sorted(set(dt.names(globals())) - set(before) - {"before"}))
    print(x, ys)
    """,
)

prog(
    "module-globals-unmatched",
    """
    import dt
    before = dt.names(globals())
    match 5:
        case [x, *ys]:
            print("no")
        case str() | bytes():
            print("no")
        case {"k": v}:
            print("no")
    print("added", sorted(set(dt.names(globals())) - set(before) - {"before"}))
    """,
)

prog(
    "module-globals-compound-first-statement-and-guard",
    """
    import dt
    for item in ([1], (2, 3), "s"):
        match item:
            case [only] if only > 0:
                if only:
                    print("one", dt.names(globals()))
            case (a, b):
                for _i in range(1):
                    print("two", dt.names(globals()))
            case _:
                print("other", dt.names(globals()))
    print(dt.names(globals()))
    """,
)

# ---------------------------------------------------------------------------
# Control flow around and inside match
# ---------------------------------------------------------------------------

prog(
    "break-and-continue-in-case-body-for-loop",
    """
    def f():
        out = []
        for i in range(10):
            match i:
                case 2 | 4:
                    continue
                case 7:
                    break
                case n if n % 3 == 0:
                    out.append(("three", n))
                    continue
                case _:
                    pass
            out.append(i)
        else:
            out.append("else ran")
        print(out)
    f()
    """,
)

prog(
    "break-in-case-body-while-true",
    """
    def f():
        n = 0
        while True:
            n += 1
            if n > 50:
                print("runaway loop")
                return
            match n:
                case 3:
                    break
                case _:
                    continue
        print("left loop at", n)
    f()
    """,
)

prog(
    "break-continue-in-nested-loop-inside-case",
    """
    def f(rows):
        for row in rows:
            match row:
                case [*cells]:
                    for c in cells:
                        if c == 0:
                            break
                        print("cell", c)
                    else:
                        print("row done")
                        continue
                    print("row broke")
                case _:
                    break
        print("end")
    f([[1, 2], [3, 0, 4], "stop", [5]])
    """,
)

prog(
    "return-from-case-body-inside-loop",
    """
    def find(items):
        for it in items:
            match it:
                case {"id": ident, "ok": True}:
                    return ident
                case _:
                    continue
        return None
    print(find([{"id": 1, "ok": False}, {"id": 2, "ok": True}, {"id": 3, "ok": True}]))
    print(find([]))
    """,
)

prog(
    "try-finally-and-except-around-match",
    """
    def f(v):
        try:
            match v:
                case 0:
                    raise ValueError("zero")
                case [x]:
                    return x
                case _:
                    print("other")
        except ValueError as e:
            print("caught", e)
        finally:
            print("finally", v)
    print(f(0)); print(f([7])); print(f(3))
    """,
)

prog(
    "match-inside-try-body-of-case-and-except-body",
    """
    def f(v):
        try:
            1 / v
        except ZeroDivisionError as e:
            match e.args:
                case (msg,):
                    print("zde", msg)
        else:
            match v:
                case 1:
                    print("one")
                case _:
                    print("not one")
    f(0); f(1); f(2)
    """,
)

prog(
    "nested-match-statements",
    """
    import dt
    def f(v):
        match v:
            case [kind, payload]:
                match kind, payload:
                    case "num", int(n):
                        print("num", n)
                    case "pair", [a, b]:
                        match a:
                            case 0:
                                print("pair with zero", b)
                            case _:
                                print("pair", a, b)
                    case _:
                        print("unknown kind", kind)
                print("inner done", dt.names(locals()))
            case _:
                print("not a message")
    f(["num", 3]); f(["pair", [0, 1]]); f(["pair", [2, 1]]); f(["x", 1]); f(5)
    """,
)

prog(
    "closures-nonlocal-capture",
    """
    def outer(v):
        x = "unset"
        y = "unset"
        def inner():
            nonlocal x, y
            match v:
                case [x, *_] if x != 0:
                    return "matched"
                case {"y": y}:
                    return "map"
            return "none"
        r = inner()
        print(r, x, y)
    outer([1, 2]); outer([0, 2]); outer({"y": 9}); outer(5)
    """,
)

prog(
    "global-statement-capture-in-function",
    """
    g = "old"
    def f(v):
        global g
        match v:
            case [g]:
                print("bound", g)
            case _:
                print("no")
    f([1]); print(g); f(5); print(g)
    """,
)

prog(
    "captured-variable-in-closure-cell",
    """
    def f(v):
        match v:
            case [x, y]:
                get = lambda: (x, y)
                x = x * 10
                print(get())
    f([1, 2])
    """,
)

prog(
    "recursive-function-with-match",
    """
    def total(t):
        match t:
            case [left, right]:
                return total(left) + total(right)
            case int(n):
                return n
            case _:
                return 0
    print(total([[1, 2], [[3, 4], 5]]))
    """,
)

prog(
    "match-in-method-self-attribute-value-pattern",
    """
    class Machine:
        IDLE = "idle"
        RUN = "run"
        def __init__(self):
            self.state = "idle"
            self.expected = "go"
        def step(self, event):
            match event, self.state:
                case self.expected, Machine.IDLE:
                    self.state = Machine.RUN
                case "stop", self.RUN:
                    self.state = Machine.IDLE
                case _:
                    print("ignored", event)
            print(self.state)
    m = Machine(); m.step("go"); m.step("go"); m.step("stop")
    """,
)

prog(
    "name-mangling-capture-in-method",
    """
    import dt
    class K:
        __secret = "class secret"
        def m(self, v):
            match v:
                case [__x, *__rest]:
                    print("A", dt.names(locals()), __x, __rest)
                case K.__secret:
                    print("B value pattern is mangled")
                case K(__a=1):
                    print("C keyword attribute is not mangled")
                case _:
                    print("D", dt.names(locals()))
    k = K()
    k.m([1, 2]); k.m("class secret")
    o = K(); o.__dict__["__a"] = 1; k.m(o)
    p = K(); p._K__a = 1; k.m(p)
    """,
)

prog(
    "name-mangling-capture-in-class-body",
    """
    import dt
    class K:
        match [1, 2]:
            case [__a, _b]:
                pass
    print(dt.dump(vars(K)))
    """,
)

prog(
    "soft-keywords-as-identifiers",
    """
    class Box:
        x = "box.x"
        def __getitem__(self, i):
            return ("item", i)
    def match(*args):
        return ("called", args)
    print(match(1, 2))
    match = Box()
    case = Box()
    print(match[0], case.x)
    match match:
        case Box(x=case):
            print("matched, case =", case)
    match, case = 1, 2
    print(match, case)
    def f(match, case):
        match match, case:
            case [match, case]:
                return match + case
    print(f(3, 4))
    """,
)

prog(
    "match-in-else-elif-while-else-with",
    """
    import contextlib
    def f(v):
        if v is None:
            return "none"
        elif isinstance(v, int):
            match v:
                case 0:
                    return "zero"
        else:
            with contextlib.suppress(KeyError):
                match v:
                    case {"k": k}:
                        return k
        n = 0
        while n < 1:
            n += 1
        else:
            match v:
                case [*_]:
                    return "seq"
        return "fell through"
    for v in (None, 0, 1, {"k": 5}, {}, [1]):
        print(f(v))
    """,
)

prog(
    "walrus-in-subject",
    """
    def f(xs):
        match (n := len(xs)):
            case 0:
                print("empty", n)
            case _:
                print("size", n)
        return n
    f([]); f([1, 2])
    """,
)

# ---------------------------------------------------------------------------
# Generators and coroutines
# ---------------------------------------------------------------------------

prog(
    "yield-in-subject-guard-and-body",
    """
    import dt
    def gen():
        match (yield "subject?"):
            case [x] if (yield ("guard?", x)):
                got = yield ("body", x)
                print("body got", got)
            case [x]:
                print("guard said no", x)
            case other:
                yield ("other", other)
        yield "end"
    g = gen()
    print(next(g)); print(g.send([1])); print(g.send(True)); print(g.send("hello"))
    g = gen()
    print(next(g)); print(g.send([2])); print(g.send(False))
    g = gen()
    print(next(g)); print(g.send(5)); print(next(g))
    """,
)

prog(
    "yield-from-in-subject-evaluated-once",
    """
    def sub():
        print("sub running")
        yield 1
        return [10, 20]
    def gen():
        match (yield from sub()):
            case [a, b]:
                yield a + b
            case _:
                yield "none"
    print(list(gen()))
    """,
)

prog(
    "await-in-subject-and-guard",
    """
    import asyncio
    calls = []
    async def value(v):
        calls.append(("value", v))
        await asyncio.sleep(0)
        return v
    async def check(x):
        calls.append(("check", x))
        return x > 1
    async def f(v):
        match await value(v):
            case [x] if await check(x):
                r = ("big", x, await value("in body"))
            case [x]:
                r = ("small", x)
            case _:
                r = "other"
        return r
    async def main():
        for v in ([5], [1], 3):
            print(await f(v))
    asyncio.run(main())
    print(calls)
    """,
)

prog(
    "async-for-and-async-with-in-case-body",
    """
    import asyncio
    class CM:
        async def __aenter__(self):
            print("enter")
            return self
        async def __aexit__(self, *a):
            print("exit")
    async def agen(n):
        for i in range(n):
            yield i
    async def f(v):
        match v:
            case {"n": n}:
                async with CM():
                    async for i in agen(n):
                        print("i", i)
            case _:
                print("other")
    asyncio.run(f({"n": 2})); asyncio.run(f(1))
    """,
)

# ---------------------------------------------------------------------------
# Literal patterns
# ---------------------------------------------------------------------------

prog(
    "literal-numbers-strings-bytes-complex",
    """
    def f(v):
        match v:
            case 0:
                return "zero"
            case -1:
                return "minus one"
            case 1.5:
                return "one and a half"
            case 1 + 2j:
                return "complex"
            case -1 - 2j:
                return "neg complex"
            case 0x10:
                return "hex sixteen"
            case 1_000:
                return "thousand"
            case "ab" "c":
                return "concatenated str"
            case b"by" b"tes":
                return "concatenated bytes"
            case "":
                return "empty str"
        return "no match"
    for v in (0, 0.0, -0.0, False, -1, -1.0, 1.5, 1 + 2j, complex(-1, -2), 16, 1000, 1000.0,
              "abc", b"bytes", bytearray(b"bytes"), "", b"", "0"):
        print(repr(v), f(v))
    """,
)

prog(
    "true-false-none-compared-with-is",
    """
    import dt
    def f(v):
        match v:
            case True:
                return "True"
            case False:
                return "False"
            case None:
                return "None"
            case 1:
                return "one"
            case 0:
                return "zero"
        return "other"
    for v in (True, False, None, 1, 0, 1.0, 0.0, dt.Eq("x")):
        print(dt.show(v), f(v))
    """,
)

prog(
    "literal-one-point-zero-vs-true",
    """
    def f(v):
        match v:
            case 1.0:
                return "1.0"
        return "no"
    def g(v):
        match v:
            case True:
                return "True"
        return "no"
    for v in (True, 1, 1.0, 1 + 0j):
        print(repr(v), f(v), g(v))
    """,
)

prog(
    "literal-compares-subject-on-left",
    """
    import dt
    class Left:
        def __eq__(self, other):
            print("Left.__eq__", repr(other))
            return NotImplemented
    def f(v):
        match v:
            case 1:
                return "one"
            case "s":
                return "s"
        return "no"
    print(f(Left())); print(f(dt.Eq("e")))
    """,
)

prog(
    "literal-str-vs-bytes-vs-int-chars",
    """
    def f(v):
        match v:
            case "a":
                return "str a"
            case b"a":
                return "bytes a"
            case 97:
                return "ninety-seven"
        return "no"
    for v in ("a", b"a", bytearray(b"a"), 97, ord("a"), b"a"[0]):
        print(repr(v), f(v))
    """,
)

# ---------------------------------------------------------------------------
# Capture, wildcard, as, group, or
# ---------------------------------------------------------------------------

prog(
    "wildcard-never-binds-underscore",
    """
    def f(v):
        _ = "kept"
        match v:
            case [_, _, *_]:
                print("two+", _)
            case {"k": _}:
                print("map", _)
            case _:
                print("wild", _)
        print("locals", sorted(locals()))
    f([1, 2, 3]); f({"k": 9}); f(0)
    def g(v):
        match v:
            case _:
                pass
        print("no _ bound:", sorted(locals()))
    g(1)
    """,
)

prog(
    "as-patterns-and-groups",
    """
    def f(v):
        match v:
            case [1, _] as pair:
                return ("pair", pair)
            case (1 | 2) as small:
                return ("small", small)
            case [[x] as inner, (y)] as outer:
                return ("nested", x, inner, y, outer)
            case ((str() as s)):
                return ("str", s)
            case (other):
                return ("other", other)
    for v in ([1, 9], 2, [[3], 4], "s", 5.5):
        print(f(v))
    """,
)

prog(
    "or-patterns-left-to-right-value-reads",
    """
    class NS:
        @property
        def a(self):
            print("read a")
            return 1
        @property
        def b(self):
            print("read b")
            return 2
        @property
        def c(self):
            print("read c")
            return 3
    ns = NS()
    def f(v):
        match v:
            case ns.a | ns.b | ns.c:
                return "abc"
            case 4 | [4] | (4, 4) | {"four": 4}:
                return "four"
        return "no"
    for v in (1, 2, 3, 4, [4], (4, 4), {"four": 4}, 5):
        print(repr(v), f(v))
    """,
)

prog(
    "or-patterns-inside-sequences-and-mappings",
    """
    def f(v):
        match v:
            case [1 | 2, (3 | 4) as y]:
                return ("A", y)
            case [(1 | 2), x] | [x, (1 | 2)]:
                return ("B", x)
            case {"k": "a" | "b" as k}:
                return ("C", k)
            case [[1, x] | [x, 1], *_]:
                return ("D", x)
        return "no"
    for v in ([1, 3], [2, 4], [1, 9], [9, 2], {"k": "b"}, {"k": "c"}, [[5, 1], 0], [[5, 5]]):
        print(v, f(v))
    """,
)

# ---------------------------------------------------------------------------
# Value patterns
# ---------------------------------------------------------------------------

prog(
    "value-patterns-enum",
    """
    import enum
    class Color(enum.Enum):
        RED = 1
        GREEN = 2
        BLUE = 3
    class Flag(enum.IntEnum):
        ONE = 1
    def f(v):
        match v:
            case Color.RED:
                return "red"
            case Color.GREEN | Color.BLUE:
                return "green or blue"
            case Flag.ONE:
                return "flag one (== 1)"
        return "no"
    for v in (Color.RED, Color.BLUE, 1, Flag.ONE, True, 2):
        print(repr(v), f(v))
    """,
)

prog(
    "value-pattern-evaluated-only-when-tried",
    """
    class Consts:
        @property
        def first(self):
            print("read first")
            return 1
        @property
        def second(self):
            print("read second")
            return 2
    c = Consts()
    def f(v):
        match v:
            case 0:
                return "zero"
            case c.first:
                return "first"
            case [c.second, c.first]:
                return "pair"
            case c.second:
                return "second"
        return "no"
    for v in (0, 1, [2, 1], [9, 1], 2):
        print(repr(v), f(v))
    """,
)

prog(
    "value-pattern-dotted-chain-and-subject-on-left",
    """
    import dt, types
    a = types.SimpleNamespace(b=types.SimpleNamespace(c=dt.Eq("value")))
    class Subj:
        def __eq__(self, other):
            print("Subj.__eq__ called with", other)
            return False
    def f(v):
        match v:
            case a.b.c:
                return "matched"
        return "no"
    print(f(Subj())); print(f(3))
    """,
)

prog(
    "value-pattern-missing-attribute-raises",
    """
    import types
    ns = types.SimpleNamespace(x=1)
    def f(v):
        match v:
            case 1:
                return "one"
            case ns.missing:
                return "never"
    print(f(1))
    try:
        f(2)
    except AttributeError as e:
        print("AttributeError", e)
    """,
)

# ---------------------------------------------------------------------------
# Sequence patterns
# ---------------------------------------------------------------------------

prog(
    "sequence-str-bytes-bytearray-not-sequences",
    """
    import collections
    def f(v):
        match v:
            case [a, b]:
                return ("two", a, b)
            case [*items]:
                return ("seq", items)
            case str() | bytes() | bytearray():
                return ("stringy", v)
        return "no"
    for v in ("ab", b"ab", bytearray(b"ab"), "", collections.UserString("ab"), memoryview(b"ab"),
              ["a", "b"], ("a",), range(2), range(5)):
        print(f(v))
    """,
)

prog(
    "sequence-iterators-and-generators-not-matched-or-consumed",
    """
    import collections
    def f(v):
        match v:
            case [*items]:
                return ("seq", items)
            case {}:
                return "map"
            case _:
                return "neither"
    g = (i for i in range(3))
    print(f(g), list(g))
    it = iter([1, 2])
    print(f(it), list(it))
    for v in ({1, 2}, frozenset([1]), {"a": 1}.keys(), {"a": 1}.values(), {"a": 1}.items(),
              {"a": 1}, collections.OrderedDict(a=1), 3):
        print(type(v).__name__, f(v))
    """,
)

prog(
    "sequence-deque-star-rest-is-list",
    """
    from collections import deque
    def f(v):
        match v:
            case [a, *rest, b]:
                return (a, type(rest).__name__, rest, b)
            case [*everything]:
                return (type(everything).__name__, everything)
    print(f(deque([1, 2, 3, 4]))); print(f(deque([1])))
    print(f((1, 2, 3))); print(f(range(4))); print(f("")); print(f(deque()))
    """,
)

_WILDCARD_STAR = """
import dt
def f(v):
    match v:
        case [a, *_, b]:
            print("A", a, b)
        case _:
            print("no")
def g(v):
    match v:
        case [*_, y, z]:
            print("tail", y, z)
QUIET = %s
f(dt.LogSeq([1, 2, 3, 4], "s4", QUIET))
f(dt.LogSeq([1, 2], "s2", QUIET))
f(dt.LogSeq([1], "s1", QUIET))
g(dt.LogSeq([7, 8, 9], "t", QUIET))
"""

# Which indices are read (s[len-1], never s[-1]; no iteration).
prog("sequence-wildcard-star-uses-nonnegative-indexing", _WILDCARD_STAR % '("len",)')
# The exact protocol, len() calls included.
prog("sequence-wildcard-star-protocol-calls-exact", _WILDCARD_STAR % "()")

_NO_STAR = """
import dt
def f(v):
    match v:
        case [a, b, c]:
            print("three", a, b, c)
        case [a, b]:
            print("two", a, b)
        case _:
            print("no")
QUIET = %s
f(dt.LogSeq([1, 2], "pair", QUIET))
f(dt.LogSeq([1, 2, 3], "triple", QUIET))
f(dt.LogSeq([1, 2, 3, 4], "four", QUIET))
"""

# Elements are taken by iterating once (unpacking), not by indexing.
prog("sequence-no-star-iterates-once", _NO_STAR % '("len",)')
# The exact protocol: len() per tried case, then one iteration.
prog("sequence-no-star-protocol-calls-exact", _NO_STAR % "()")

prog(
    "sequence-named-star-iterates-once",
    """
    import dt
    def f(v):
        match v:
            case [a, *rest, b]:
                print("A", a, rest, b)
            case [*everything]:
                print("B", everything)
    f(dt.LogSeq([1, 2, 3, 4], "long"))
    f(dt.LogSeq([1], "short"))
    """,
)

prog(
    "sequence-star-wildcard-only-and-empty",
    """
    import dt
    def f(v):
        match v:
            case []:
                print("empty")
            case [*_]:
                print("any sequence")
    f(dt.LogSeq([], "e")); f(dt.LogSeq([1, 2], "two"))
    """,
)

prog(
    "sequence-nested-subpattern-fails-after-partial-reads",
    """
    import dt
    def f(v):
        match v:
            case [1, [2, x]]:
                print("nested", x)
            case [1, *_, 3]:
                print("star")
            case _:
                print("no")
    f(dt.LogSeq([1, dt.LogSeq([2, 5], "inner")], "outer"))
    f(dt.LogSeq([1, 9, 3], "o2"))
    f(dt.LogSeq([2, 9, 3], "o3"))
    """,
)

prog(
    "sequence-list-subclass-overriding-getitem-and-len",
    """
    class L(list):
        def __getitem__(self, i):
            print("L getitem", i)
            return list.__getitem__(self, i)
        def __len__(self):
            print("L len")
            return list.__len__(self)
        def __iter__(self):
            print("L iter")
            return list.__iter__(self)
    def f(v):
        match v:
            case [a, *_, b]:
                print("A", a, b)
        match v:
            case [a, b, c]:
                print("B", a, b, c)
        match v:
            case [a, *r]:
                print("C", a, r)
    f(L([1, 2, 3]))
    """,
)

prog(
    "sequence-length-exact-and-minimum",
    """
    def f(v):
        match v:
            case []:
                return "0"
            case [_]:
                return "1"
            case [_, _]:
                return "2"
            case [_, _, _, *_]:
                return "3+"
    for n in range(6):
        print(n, f(list(range(n))), f(tuple(range(n))))
    """,
)

prog(
    "sequence-literal-list-vs-tuple-comparison",
    """
    import enum
    class K(enum.IntEnum):
        ONE = 1
    def f(v):
        match v:
            case (K.ONE,):
                return "K.ONE one-tuple pattern"
        return "no"
    def g(v):
        match v:
            case [True]:
                return "[True]"
            case (1, 2):
                return "(1, 2)"
        return "no"
    for v in ([1.0], (1,), [True], (K.ONE,), [1, 2], (1.0, 2.0), [True, 2]):
        print(v, f(v), g(v))
    """,
)

prog(
    "sequence-parenthesized-vs-group",
    """
    def f(v):
        match v:
            case (x,):
                return ("one-tuple pattern", x)
            case (y):
                return ("group is a capture", y)
    print(f([1])); print(f((2,))); print(f(3)); print(f("s"))
    """,
)

prog(
    "sequence-registered-virtual-subclass",
    """
    import collections.abc
    class Thing:
        def __init__(self, *items):
            self.items = items
        def __len__(self):
            return len(self.items)
        def __getitem__(self, i):
            return self.items[i]
        def __iter__(self):
            return iter(self.items)
    def f(v):
        match v:
            case [a, b]:
                return ("seq", a, b)
        return "no"
    print(f(Thing(1, 2)))
    collections.abc.Sequence.register(Thing)
    print(f(Thing(1, 2)))
    """,
)

prog(
    "sequence-array-and-memoryview",
    """
    import array
    def f(v):
        match v:
            case [a, b]:
                return ("two", a, b)
            case [*_]:
                return "seq"
        return "no"
    print(f(array.array("b", [1, 2]))); print(f(memoryview(b"xy")))
    """,
)

prog(
    "sequence-len-error-propagates",
    """
    import collections.abc
    class Bad(collections.abc.Sequence):
        def __len__(self):
            raise RuntimeError("len exploded")
        def __getitem__(self, i):
            raise IndexError(i)
    def f(v):
        match v:
            case [*_]:
                return "any seq (no len needed)"
    def g(v):
        match v:
            case [x]:
                return "one"
    print(f(Bad()))
    try:
        g(Bad())
    except RuntimeError as e:
        print("RuntimeError", e)
    """,
)

# ---------------------------------------------------------------------------
# Mapping patterns
# ---------------------------------------------------------------------------

prog(
    "mapping-empty-pattern-matches-any-mapping",
    """
    import collections, types
    def f(v):
        match v:
            case {}:
                return "mapping"
        return "no"
    for v in ({}, {"a": 1}, collections.OrderedDict(a=1), collections.defaultdict(int),
              collections.Counter("ab"), collections.ChainMap({}), collections.UserDict(x=1),
              types.MappingProxyType({"k": 1}), [], (), "{}", set(), None):
        print(type(v).__name__, f(v))
    """,
)

prog(
    "mapping-keys-extra-keys-allowed",
    """
    def f(v):
        match v:
            case {"kind": "point", "x": x, "y": y}:
                return ("point", x, y)
            case {"kind": "circle", "r": r}:
                return ("circle", r)
            case {"kind": kind}:
                return ("unknown", kind)
        return "no"
    for v in ({"kind": "point", "x": 1, "y": 2, "z": 3}, {"kind": "circle", "r": 4},
              {"kind": "point", "x": 1}, {"kind": "tri"}, {"x": 1}):
        print(f(v))
    """,
)

prog(
    "mapping-double-star-rest-is-new-dict",
    """
    import collections
    def f(v):
        match v:
            case {"a": a, "b": 2, **rest}:
                rest["added"] = True
                return ("A", a, type(rest).__name__, rest, rest is v)
            case {**rest}:
                return ("B", type(rest).__name__, rest, rest is v)
    d = {"a": 1, "b": 2, "c": 3}
    print(f(d)); print(d)
    e = {"x": 1}
    print(f(e))
    print(f(collections.OrderedDict([("b", 2), ("a", 0), ("z", 9)])))
    print(f(collections.UserDict({"q": 1})))
    """,
)

prog(
    "mapping-defaultdict-and-counter-gain-no-keys",
    """
    import collections
    def f(v):
        match v:
            case {"missing": x}:
                return ("missing", x)
            case {"here": h, **rest}:
                return ("here", h, rest)
        return "no"
    dd = collections.defaultdict(list, here=1)
    print(f(dd), dict(dd))
    c = collections.Counter(here=2)
    print(f(c), dict(c))
    class Missing(dict):
        def __missing__(self, key):
            print("__missing__", key)
            return "made up"
    m = Missing(here=3)
    print(f(m), dict(m))
    """,
)

_MAPPING_CALLS = """
import dt
def f(v):
    match v:
        case {"a": 1, "b": b}:
            print("A", b)
        case {"a": a, "c": c, "d": d}:
            print("B")
        case {"a": a}:
            print("C", a)
QUIET = %s
f(dt.LogMap({"a": 1, "b": 2}, "m1", QUIET))
f(dt.LogMap({"a": 5, "b": 2}, "m2", QUIET))
f(dt.LogMap({"z": 0}, "m3", QUIET))
"""

# Keys are looked up with get() (no __contains__/__getitem__/keys()).
prog("mapping-keys-looked-up-with-get", _MAPPING_CALLS % '("len",)')
# The exact protocol: len() first (too short: no lookups), then get() per key.
prog("mapping-protocol-calls-exact", _MAPPING_CALLS % "()")

# Issue 10: keyword sub-patterns name attributes as CPython normalises
# identifiers (NFKC): a fullwidth x reads attribute "x".
prog(
    "class-pattern-keyword-nfkc-normalised",
    """
    class P:
        def __init__(self, x):
            self.x = x
    def f(v):
        match v:
            case P(\uff58=5):
                return "five"
            case P(\uff58=other):
                return ("other", other)
        return "no"
    print(f(P(5)), f(P(6)), f(3))
    """,
)

# Issue 10: a class body matching a namedtuple class pattern needs no name
# the class scope cannot see.
prog(
    "class-body-namedtuple-and-dataclass-patterns",
    """
    import collections, dataclasses
    NT = collections.namedtuple("NT", "a b")
    @dataclasses.dataclass
    class DC:
        x: int
        y: int
    for subject in (NT(1, 2), DC(3, 4), [5, 6], {"k": 7}):
        class C:
            match subject:
                case NT(_, b):
                    found = ("nt", b)
                case DC(x, y=y):
                    found = ("dc", x, y)
                case [first, *rest]:
                    found = ("seq", first, rest)
                case {"k": k}:
                    found = ("map", k)
        print(sorted(k for k in vars(C) if not k.startswith("__")), C.found)
    """,
)

# A missing key or attribute against a sub-pattern that never matches None
# is read as None (one lookup instead of two): present-but-None values, None
# patterns, captures and value patterns still tell missing from None.
prog(
    "missing-key-or-attribute-versus-none-value",
    """
    import collections
    class Anything:
        def __eq__(self, other):
            return True
    ANY = Anything()
    class K:
        ANY = ANY
    class C:
        def __init__(self, **kw):
            self.__dict__.update(kw)
    def f(v):
        match v:
            case {"k": str() | [] | {} as s}:
                return ("str-seq-map", s)
            case {"k": None}:
                return "none"
            case {"j": K.ANY}:
                return "any"
            case {"k": 1, "m": m}:
                return ("one", m)
            case C(a="x", b=int(b)):
                return ("c", b)
            case C(a=None):
                return "c-none"
            case C(z=K.ANY):
                return "c-any"
        return "no"
    dd = collections.defaultdict(int)
    for v in ({}, {"k": None}, {"k": "s"}, {"k": []}, {"j": None}, {"k": 1},
              {"k": 1, "m": None}, dd, C(), C(a="x"), C(a="x", b=None),
              C(a="x", b=3), C(a=None), C(z=None)):
        print(f(v))
    print(dict(dd))
    """,
)

prog(
    "mapping-double-star-rest-protocol-calls",
    """
    import dt
    def f(v):
        match v:
            case {"a": a, **rest}:
                print("rest", rest)
    f(dt.LogMap({"a": 1, "b": 2, "c": 3}, "m"))
    """,
)

prog(
    "mapping-double-star-rest-built-only-after-values-match",
    """
    import collections.abc
    class NoCopy(collections.abc.Mapping):
        def __init__(self, d):
            self.d = d
        def __len__(self):
            return len(self.d)
        def __iter__(self):
            raise RuntimeError("iterated")
        def keys(self):
            raise RuntimeError("keys() called")
        def __getitem__(self, k):
            return self.d[k]
        def get(self, k, default=None):
            return self.d.get(k, default)
    def f(v):
        match v:
            case {"a": 1, **rest}:
                return ("a is 1", rest)
            case {"a": a}:
                return ("a", a)
    for v in (NoCopy({"a": 2}), NoCopy({"a": 1})):
        try:
            print(f(v))
        except RuntimeError as e:
            print("RuntimeError", e)
    """,
)

prog(
    "mapping-duplicate-runtime-keys-value-error",
    """
    class K:
        A = "a"
        B = "a"
        ONE = 1
    def f(v):
        match v:
            case {K.A: x, K.B: y}:
                return ("dup", x, y)
    def g(v):
        match v:
            case {"a": x, K.A: y}:
                return ("dup2", x, y)
    def h(v):
        match v:
            case {True: x, K.ONE: y}:
                return ("dup3", x, y)
    for fn in (f, g, h):
        for v in ({"a": 1, "b": 2}, {"x": 1, "y": 2}, {True: 1, 2: 2}, {"a": 1}, 5):
            try:
                print(fn(v))
            except ValueError as e:
                print("ValueError", e)
    """,
)

prog(
    "mapping-value-pattern-keys-and-special-literal-keys",
    """
    import enum
    class Color(enum.Enum):
        RED = "red"
    def f(v):
        match v:
            case {Color.RED: x}:
                return ("red", x)
            case {None: x, True: y}:
                return ("none/true", x, y)
            case {-1: x, 1.5: y, b"k": z}:
                return ("nums", x, y, z)
        return "no"
    print(f({Color.RED: 1})); print(f({None: 2, 1: 3})); print(f({-1: 0, 1.5: 1, b"k": 2}))
    print(f({"red": 4}))
    """,
)

prog(
    "mapping-not-a-sequence-and-sequence-not-mapping",
    """
    def f(v):
        match v:
            case [*_]:
                return "seq"
            case {}:
                return "map"
        return "no"
    print(f({})); print(f({0: "a"})); print(f([])); print(f(()))
    """,
)

prog(
    "mapping-get-exception-propagates",
    """
    import collections.abc
    class Boom(collections.abc.Mapping):
        def __len__(self):
            return 1
        def __iter__(self):
            return iter(["k"])
        def __getitem__(self, k):
            raise LookupError("getitem")
        def get(self, k, default=None):
            raise RuntimeError("get exploded")
    def f(v):
        match v:
            case {"k": x}:
                return x
    try:
        f(Boom())
    except Exception as e:
        print(type(e).__name__, e)
    """,
)

# ---------------------------------------------------------------------------
# MRO: Sequence vs Mapping (test_patma TestInheritance)
# ---------------------------------------------------------------------------

_INHERITANCE_PRELUDE = """
import collections, collections.abc
def seq_then_map(x):
    match x:
        case [*_]:
            return "seq"
        case {}:
            return "map"
def map_then_seq(x):
    match x:
        case {}:
            return "map"
        case [*_]:
            return "seq"
def check(*objs):
    print([(type(o).__name__, seq_then_map(o), map_then_seq(o)) for o in objs])
"""

prog(
    "inheritance-multiple-mapping-first",
    _INHERITANCE_PRELUDE + """
class C:
    pass
class M1(collections.UserDict, collections.abc.Sequence):
    pass
class M2(C, collections.UserDict, collections.abc.Sequence):
    pass
class M3(collections.UserDict, C, list):
    pass
class M4(dict, collections.abc.Sequence, C):
    pass
check(M1(), M2(), M3(), M4())
""",
)

prog(
    "inheritance-multiple-sequence-first",
    _INHERITANCE_PRELUDE + """
class C:
    pass
class S1(collections.UserList, collections.abc.Mapping):
    pass
class S2(C, collections.UserList, collections.abc.Mapping):
    pass
class S3(list, C, collections.abc.Mapping):
    pass
class S4(collections.UserList, dict, C):
    pass
check(S1(), S2(), S3(), S4())
""",
)

prog(
    "inheritance-late-registration-mapping",
    _INHERITANCE_PRELUDE + """
class Parent:
    pass
class ChildPre(Parent):
    pass
class GrandchildPre(ChildPre):
    pass
collections.abc.Mapping.register(Parent)
class ChildPost(Parent):
    pass
class GrandchildPost(ChildPost):
    pass
check(Parent(), ChildPre(), GrandchildPre(), ChildPost(), GrandchildPost())
""",
)

prog(
    "inheritance-late-registration-sequence",
    _INHERITANCE_PRELUDE + """
class Parent:
    pass
class ChildPre(Parent):
    pass
class GrandchildPre(ChildPre):
    pass
collections.abc.Sequence.register(Parent)
class ChildPost(Parent):
    pass
class GrandchildPost(ChildPost):
    pass
check(Parent(), ChildPre(), GrandchildPre(), ChildPost(), GrandchildPost())
""",
)

prog(
    "lookups-before-sub-patterns-errors-as-cpython",
    """
class V:
    ONE = 1
class Box:
    __match_args__ = ("item",)
    def __init__(self, item=None):
        self.item = item
class C:
    def __init__(self, a, b):
        self.a, self.b = a, b
def mapping_missing_first(v):
    # V.ONE missing: no match, before the duplicate check of True (== 1)
    match v:
        case {V.ONE: Box(), True: _}:
            return "box"
    return "no"
def mapping_value_then_duplicate(v):
    # V.ONE present: CPython raises at the key 1 before trying 2.5
    match v:
        case {V.ONE: 2.5, 1: _}:
            return "never"
    return "no"
def mapping_raising_sub_pattern(v):
    # 'b' missing: no match before int(x, y) could raise
    match v:
        case {"a": int(x, y), "b": Box()}:
            return "never"
    return "no"
def keyword_raising_sub_pattern(v):
    # b present but not 1: int(x, y) is tried first and raises
    match v:
        case C(a=int(x, y), b=1):
            return "never"
    return "no"
def attempt(f, v):
    try:
        print(f.__name__, f(v))
    except (TypeError, ValueError) as e:
        print(f.__name__, type(e).__name__, e)
attempt(mapping_missing_first, {-1: 0, 0: 0})
attempt(mapping_missing_first, {1: Box(), 2: 0})
attempt(mapping_value_then_duplicate, {1: "x", "y": 2})
attempt(mapping_value_then_duplicate, {0: "x", "y": 2})
attempt(mapping_raising_sub_pattern, {"a": 5})
attempt(mapping_raising_sub_pattern, {"a": 5, "b": Box()})
attempt(mapping_raising_sub_pattern, {"a": "s", "b": 1})
attempt(keyword_raising_sub_pattern, C(5, 2))
attempt(keyword_raising_sub_pattern, C("s", 2))
""",
)

prog(
    "shared-length-is-a-sequence-length-only",
    """
import collections
def ident(v):
    return v
class K:
    A = "a"
def f(v):
    # A computed subject: its kind and length are shared by the cases. The
    # length is a sequence's; a mapping pattern with a value key still
    # checks len() itself.
    match ident(v):
        case [_]:
            return "one item"
        case {K.A: 1, "b": 2, **rest}:
            return ("map", rest)
        case [_, *more]:
            return ("items", more)
    return "no"
for v in ({"a": 1, "b": 2}, collections.OrderedDict(a=1, b=2, c=3), [1], [1, 2]):
    print(f(v))
""",
)

# Before 3.10 the helper computes the type flags as CPython 3.10+ does:
# inherited from the first base in the MRO that has one, an ABC's own
# `__abc_tpflags__`, and a registration that makes a class what the ABC is.
_ABC_PRELUDE = _INHERITANCE_PRELUDE + """
from collections.abc import Mapping, Sequence
import dt
Both = dt.Hybrid  # a sequence of its items and a mapping of its data
def shapes(x):
    match x:
        case []:
            return "empty seq"
        case [1, 2]:
            return "seq 1 2"
        case [first, *rest]:
            return ("star seq", first, rest)
        case {"k": v}:
            return ("map k", v)
        case {}:
            return "map"
    return "neither"
def nested(x):
    match x:
        case [{"k": v}]:
            return ("map in list", v)
        case [[*_]]:
            return "seq in list"
    return "no"
def report(*objs):
    check(*objs)
    print([(type(o).__name__, shapes(o), nested([o])) for o in objs])
"""

prog(
    "abc-sequence-subclass-registered-as-mapping",
    _ABC_PRELUDE + """
class SeqThenMap(Both, Sequence):
    pass
class KidBefore(SeqThenMap):
    pass
Mapping.register(SeqThenMap)
class KidAfter(SeqThenMap):
    pass
objs = [c([], {}) for c in (SeqThenMap, KidBefore, KidAfter)]
objs += [c([1, 2], {"k": 3}) for c in (SeqThenMap, KidBefore, KidAfter)]
report(*objs)
""",
)

prog(
    "abc-mapping-subclass-registered-as-sequence",
    _ABC_PRELUDE + """
class MapThenSeq(Both, Mapping):
    pass
class KidBefore(MapThenSeq):
    pass
Sequence.register(MapThenSeq)
class KidAfter(MapThenSeq):
    pass
objs = [c([], {}) for c in (MapThenSeq, KidBefore, KidAfter)]
objs += [c([1, 2], {"k": 3}) for c in (MapThenSeq, KidBefore, KidAfter)]
report(*objs)
""",
)

prog(
    "abc-builtin-subclasses-registered",
    _ABC_PRELUDE + """
class ListAsMap(list):
    def get(self, key, default=None):
        return default
    def keys(self):
        return ()
Mapping.register(ListAsMap)
class DictAsSeq(dict):
    pass
Sequence.register(DictAsSeq)
class StrAsSeq(str):
    pass
Sequence.register(StrAsSeq)
class StrWithSequenceBase(str, Sequence):
    pass
report(ListAsMap([1, 2]), StrAsSeq("ab"))
# Indexing and iterating it disagree: only its kind is looked at.
check(DictAsSeq({"k": 1}))
report(StrWithSequenceBase("ab"), StrWithSequenceBase(""))
""",
)

prog(
    "abc-first-base-with-a-flag-wins",
    _ABC_PRELUDE + """
class Plain:
    pass
class SeqAfterPlain(Plain, Both, Sequence):
    pass
class MapBeforeSeq(Both, Mapping, Sequence):
    pass
class SeqBeforeMap(Both, Sequence, Mapping):
    pass
class MapBeforeList(Mapping, list):
    def __iter__(self):
        return iter(())
    def get(self, key, default=None):
        return default
class Registered:
    pass
Sequence.register(Registered)
class Mixed(Plain, Registered, Both, Mapping):
    pass
report(SeqAfterPlain([1, 2]), MapBeforeSeq([1, 2], {"k": 1}),
       SeqBeforeMap([1, 2], {"k": 1}), MapBeforeList([1, 2]))
print(shapes(Mixed([1], {"k": 1})))
""",
)

prog(
    "abc-own-abc-tpflags",
    _ABC_PRELUDE + """
import abc
class MapLike(abc.ABC):
    __abc_tpflags__ = 1 << 6
class SeqLike(abc.ABC):
    __abc_tpflags__ = 1 << 5
class R(Both):
    pass
MapLike.register(R)
class RKid(R):
    pass
class S(Both, SeqLike):
    pass
report(R([1], {"k": 2}), RKid([1], {"k": 2}), S([1, 2], {"k": 2}))
""",
)

prog(
    "abc-registered-with-both-kinds-mapping-last",
    _ABC_PRELUDE + """
class Twice(Both):
    pass
Sequence.register(Twice)
Mapping.register(Twice)
report(Twice([1, 2], {"k": 1}))
""",
)

prog(
    "abc-registered-with-both-kinds-sequence-last",
    _ABC_PRELUDE + """
class Twice(Both):
    pass
Mapping.register(Twice)
Sequence.register(Twice)
report(Twice([1, 2], {"k": 1}))
""",
)

prog(
    "abc-registration-after-subclass-with-other-first-base",
    _ABC_PRELUDE + """
class SeqBase(Both, Sequence):
    pass
class Plain:
    pass
class Kid(SeqBase, Plain):
    pass
Mapping.register(Plain)
report(Kid([1, 2], {"k": 1}))
""",
)

# ---------------------------------------------------------------------------
# Class patterns
# ---------------------------------------------------------------------------

prog(
    "class-pattern-keywords-and-isinstance",
    """
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y
    class Point3(Point):
        pass
    def f(v):
        match v:
            case Point(x=0, y=0):
                return "origin"
            case Point3(x=x):
                return ("3d", x)
            case Point(x=x, y=y) if x == y:
                return ("diag", x)
            case Point():
                return "point"
            case object():
                return "object"
    for v in (Point(0, 0), Point3(0, 0), Point3(1, 2), Point(2, 2), Point(1, 2), 5):
        print(f(v))
    """,
)

prog(
    "class-pattern-dataclass-positional",
    """
    from dataclasses import dataclass, field, InitVar
    @dataclass
    class Point:
        x: int
        y: int = 0
    @dataclass
    class Child(Point):
        z: int = 9
    @dataclass
    class Partial:
        a: int
        hidden: int = field(init=False, default=5)
        b: int = 1
    @dataclass(init=False)
    class NoInit:
        p: int = 1
        q: int = 2
    @dataclass
    class Own:
        __match_args__ = ("second",)
        first: int
        second: int
    def f(v):
        match v:
            case Child(a, b, c):
                return ("child", a, b, c)
            case Point(a, b):
                return ("point", a, b)
            case Partial(a, b):
                return ("partial", a, b)
            case NoInit(p, q):
                return ("noinit", p, q)
            case Own(s):
                return ("own", s)
    for v in (Point(1, 2), Child(1, 2, 3), Partial(7, 8), NoInit(), Own(1, 2)):
        print(f(v))
    """,
)

prog(
    "class-pattern-dataclass-too-many-positionals",
    """
    from dataclasses import dataclass, field
    @dataclass
    class Partial:
        a: int
        hidden: int = field(init=False, default=5)
    def f(v):
        match v:
            case Partial(x, y):
                return (x, y)
    try:
        f(Partial(1))
    except TypeError as e:
        print("TypeError", e)
    """,
)

prog(
    "class-pattern-dataclass-initvar-in-match-args",
    """
    from dataclasses import dataclass, InitVar
    @dataclass
    class WithInitVar:
        a: int
        scale: InitVar[int] = 2
        def __post_init__(self, scale):
            self.a = self.a * scale
    @dataclass
    class Strict:
        a: int
        token: InitVar[int]
        def __post_init__(self, token):
            pass
    def f(v):
        match v:
            case WithInitVar(a, s):
                return ("with", a, s)
            case Strict(a, t):
                return ("strict", a, t)
            case Strict(a):
                return ("strict one", a)
    print(f(WithInitVar(3, 10))); print(f(Strict(1, 2)))
    """,
)

prog(
    "class-pattern-dataclass-subclass-not-dataclass",
    """
    from dataclasses import dataclass
    @dataclass
    class Base:
        u: int
        v: int
    class Sub(Base):
        pass
    def f(v):
        match v:
            case Sub(a, b):
                return ("sub", a, b)
            case Base(a, b):
                return ("base", a, b)
    print(f(Sub(1, 2))); print(f(Base(3, 4)))
    """,
)

prog(
    "class-pattern-namedtuple-positional",
    """
    import collections, typing
    NT = collections.namedtuple("NT", "a b")
    class TNT(typing.NamedTuple):
        x: int
        y: str = "d"
    class SubNT(NT):
        pass
    def f(v):
        match v:
            case TNT(x, y):
                return ("tnt", x, y)
            case SubNT(p, q):
                return ("subnt", p, q)
            case NT(p, q):
                return ("nt", p, q)
    def g(v):
        match v:
            case [p, q]:
                return ("as sequence", p, q)
    print(f(NT(1, 2))); print(f(TNT(3))); print(f(SubNT(5, 6))); print(g(NT(7, 8)))
    """,
)

prog(
    "class-pattern-builtins-match-self",
    """
    def f(v):
        match v:
            case bool(b):
                return ("bool", b)
            case int(i):
                return ("int", i)
            case float(x):
                return ("float", x)
            case str(s):
                return ("str", s)
            case bytes(b):
                return ("bytes", b)
            case bytearray(b):
                return ("bytearray", b)
            case tuple(t):
                return ("tuple", t)
            case list(l):
                return ("list", l)
            case dict(d):
                return ("dict", d)
            case frozenset(fs):
                return ("frozenset", sorted(fs))
            case set(s):
                return ("set", sorted(s))
        return "no"
    for v in (True, 1, 1.0, "s", b"b", bytearray(b"ba"), (1,), [1], {"k": 1}, frozenset([2, 1]),
              {3, 1}, None):
        print(f(v))
    def g(v):
        match v:
            case int(0 | 1 as bit):
                return ("bit", bit)
            case int(True):
                return "int(True)?"
            case str("x" | "y" as xy):
                return ("xy", xy)
        return "no"
    for v in (0, True, False, 2, "x", "z"):
        print(repr(v), g(v))
    """,
)

prog(
    "class-pattern-builtin-subclasses-self-match",
    """
    class Sym(str):
        pass
    class Tup(tuple):
        pass
    class MyInt(int):
        pass
    class WithArgs(str):
        __match_args__ = ("upper_",)
        @property
        def upper_(self):
            return self.upper()
    def f(v):
        match v:
            case Sym("x"):
                return "Sym x"
            case Tup([a, *r]):
                return ("Tup", a, r)
            case MyInt(n) if n > 1:
                return ("MyInt", n)
            case WithArgs(u):
                return ("WithArgs", u)
            case str(s):
                return ("plain str", s)
        return "no"
    for v in (Sym("x"), Sym("y"), Tup((1, 2, 3)), MyInt(5), MyInt(0), WithArgs("abc"), "x", 5):
        print(repr(v), f(v))
    """,
)

prog(
    "class-pattern-self-match-decided-at-run-time",
    """
    import builtins
    str_alias = str
    def make(name):
        return {"int": int, "user": type("User", (), {})}[name]
    Dyn = make("int")
    def f(v):
        match v:
            case str_alias(s):
                return ("aliased str", s)
            case Dyn(n):
                return ("dyn int", n)
            case builtins.float(x):
                return ("dotted float", x)
        return "no"
    print(f("s")); print(f(3)); print(f(2.5)); print(f(None))
    Dyn = make("user")
    try:
        print(f(Dyn()))
    except TypeError as e:
        print("TypeError", e)
    """,
)

prog(
    "class-pattern-builtin-too-many-positionals",
    """
    def f(v):
        match v:
            case int(a, b):
                return (a, b)
    for v in (1, "s"):
        try:
            print(f(v))
        except TypeError as e:
            print("TypeError", e)
    """,
)

prog(
    "class-pattern-builtin-too-many-positionals-in-or-pattern",
    """
    def f(v):
        match v:
            case [k] | int(_, k):
                return ("matched", k)
            case {"b": f} | str(_, _, missing=f):
                return ("str", f)
            case _:
                return "no"
    for v in ([1], "s", 5, {"b": 2}, None):
        try:
            print(f(v))
        except TypeError as e:
            print("TypeError", e)
    """,
)

prog(
    "class-pattern-match-args-not-a-tuple",
    """
    class D:
        __match_args__ = None
        a = 1
    class L:
        __match_args__ = ["a"]
        a = 1
    class TupSub(tuple):
        pass
    class T:
        __match_args__ = TupSub(("a",))
        a = 1
    class N:
        __match_args__ = (1,)
        a = 1
    def f(v, cls):
        match v:
            case cls(x):
                return x
    for cls in (D, L, T, N):
        try:
            print(f(cls(), cls))
        except TypeError as e:
            print("TypeError", e)
    def kw_only(v):
        match v:
            case D(a=x):
                return ("kw only never reads __match_args__", x)
    print(kw_only(D()))
    """,
)

prog(
    "class-pattern-too-many-positionals-messages",
    """
    class One:
        __match_args__ = ("a",)
        a = 1
    class Zero:
        pass
    class Two:
        __match_args__ = ("a", "b")
        a = b = 1
    def f(v, cls):
        match v:
            case cls(x, y, z):
                return "three"
    for cls in (One, Zero, Two):
        try:
            print(f(cls(), cls))
        except TypeError as e:
            print("TypeError", e)
    try:
        f(5, One)
        print("no isinstance, no error")
    except TypeError as e:
        print("TypeError", e)
    """,
)

prog(
    "class-pattern-duplicate-attribute",
    """
    class E:
        __match_args__ = ("a", "b")
        a = 1
        b = 2
    def f(v):
        match v:
            case E(x, a=y):
                return (x, y)
    def g(v):
        match v:
            case E(x, y, b=z):
                return (x, y, z)
    for fn in (f, g):
        try:
            print(fn(E()))
        except TypeError as e:
            print("TypeError", e)
    print(f(1))
    """,
)

prog(
    "class-pattern-missing-attribute-is-no-match",
    """
    import dt
    class Obj:
        __match_args__ = ("present", "absent")
        present = 1
    def f(v):
        x = "old"
        match v:
            case Obj(x, y):
                print("both", x, y)
            case Obj(absent=x):
                print("absent")
            case dt.Props(gone=g):
                print("gone")
            case Obj(present=x):
                print("present", x)
            case dt.Props(a, b):
                print("props", a, b)
        print("x after", x)
    f(Obj()); f(dt.Props(1, 2))
    """,
)

prog(
    "class-pattern-other-exceptions-propagate",
    """
    import dt
    def f(v):
        match v:
            case dt.Props(boom=x):
                return "never"
            case _:
                return "no"
    try:
        print(f(dt.Props(1, 2)))
    except KeyError as e:
        print("KeyError", e)
    print(f(3))
    """,
)

prog(
    "class-pattern-reads-attributes-in-order",
    """
    import dt
    def f(v):
        match v:
            case dt.Props(1, b):
                print("A", b)
            case dt.Props(a, b=2):
                print("B", a)
            case dt.Props(b=b, a=a) if a == b:
                print("C", a)
            case _:
                print("none")
    f(dt.Props(1, 5)); f(dt.Props(9, 2)); f(dt.Props(3, 3)); f(dt.Props(4, 5))
    """,
)

prog(
    "class-pattern-non-type-raises-type-error",
    """
    def func():
        pass
    instance = object()
    def f(v, c):
        match v:
            case 0:
                return "zero first"
            case c():
                return "never"
    for c in (func, instance, len):
        try:
            print(f(1, c))
        except TypeError as e:
            print("TypeError", e)
    print(f(0, func))
    """,
    oracles_may_differ=True,  # 3.10 "must be a type", 3.12 "must be a class"
)

prog(
    "class-pattern-isinstance-hook",
    """
    class Meta(type):
        def __instancecheck__(cls, obj):
            print("instancecheck", type(obj).__name__)
            return isinstance(obj, int)
    class AnyInt(metaclass=Meta):
        __match_args__ = ("real",)
    def f(v):
        match v:
            case AnyInt(r):
                return ("anyint", r)
        return "no"
    print(f(5)); print(f("s"))
    """,
)

# ---------------------------------------------------------------------------
# The subject is one value; helper names never show; user names never matter
# ---------------------------------------------------------------------------

prog(
    "subject-name-rebound-by-capture-before-failed-guard",
    """
    def f(v):
        match v:
            case [v, *_] if False:
                print("A")
            case [1, 2]:
                print("B: tested the original subject; v is now", v)
            case _:
                print("C: tested something else; v is", v)
    f([1, 2])
    """,
)

prog(
    "subject-name-rebound-by-guard-walrus",
    """
    def f(v):
        match v:
            case int() if (v := "rebound") and False:
                print("A")
            case 5:
                print("B: still the subject 5; v is", v)
            case _:
                print("C", v)
    f(5)
    """,
)

prog(
    "subject-global-rebound-by-guard-side-effect",
    """
    state = 1
    def advance():
        global state
        state = 2
        return False
    def f():
        match state:
            case 1 if advance():
                print("A")
            case 2:
                print("B: wrong, the subject was 1")
            case 1:
                print("C: right, the subject is still 1")
    f()
    state = 1
    match state:
        case 1 if advance():
            print("module A")
        case 2:
            print("module B: wrong")
        case _:
            print("module C: right", state)
    """,
)

prog(
    "subject-nonlocal-rebound-by-guard-side-effect",
    """
    def outer():
        v = [1]
        def bump():
            nonlocal v
            v = [2]
            return False
        match v:
            case [1] if bump():
                print("A")
            case [2]:
                print("B: wrong")
            case [1]:
                print("C: right", v)
    outer()
    """,
)

prog(
    "subject-attribute-and-item-read-once",
    """
    import dt
    class Obj:
        @property
        def prop(self):
            print("read prop")
            return [1, 2]
    def f(o, d):
        match o.prop:
            case [1]:
                print("one")
            case [1, x]:
                print("two", x)
        match d["k"]:
            case 0:
                print("zero")
            case _:
                print("other")
    f(Obj(), dt.LogMap({"k": 5}))
    """,
)

prog(
    "locals-after-unmatched-computed-subject",
    """
    import dt
    def f(o):
        match o["k"]:
            case 1:
                print("one", dt.names(locals()))
            case [x]:
                print("list")
        print("after", dt.names(locals()))
        match len(o) + 1:
            case 100:
                pass
        print("after 2", dt.names(locals()))
    f({"k": 5}); f({"k": 1})
    """,
)

prog(
    "locals-inside-guard",
    """
    import dt
    def f(v):
        match v + 0:
            case 1 if print("guard1", dt.names(locals())) or False:
                pass
            case [x] | x if print("guard2", dt.names(locals())) or False:
                pass
            case y if print("guard3", dt.names(locals())) or True:
                print("body", dt.names(locals()))
    f(1)
    class C:
        match 1:
            case 1 if print("class guard", dt.names(locals())) or True:
                pass
    match 2:
        case int(n) if print("module guard", [k for k in dt.names(globals()) if k != "C"]) or True:
            pass
    """,
)

prog(
    "helpers-not-left-after-exception-in-function",
    """
    import dt
    def f(v):
        try:
            match v[0]:
                case 1:
                    pass
                case [x] if 1 / 0:
                    pass
        except ZeroDivisionError:
            print("after raise", dt.names(locals()))
        try:
            match v[0]:
                case dt.Props(boom=b):
                    pass
        except KeyError:
            print("after raise 2", dt.names(locals()))
    f([[5]]); f([dt.Props(1, 2)])
    """,
)

prog(
    "helpers-not-left-after-exception-in-class-body",
    """
    import dt
    class C:
        try:
            match [1, 2]:
                case [x, y] if x / 0:
                    pass
        except ZeroDivisionError:
            pass
        try:
            match {"k": 1}:
                case {"k": k, **rest} if k / 0:
                    pass
        except ZeroDivisionError:
            pass
    print(dt.dump(vars(C)))
    # (a class body keeps its temporaries in globals(), out of the namespace)
    print(sorted(k for k in globals() if k.startswith("_spam_")))
    """,
)

prog(
    "helpers-not-left-after-exception-at-module-level",
    """
    import dt
    before = set(dt.names(globals()))
    try:
        match [1, 2]:
            case [x, y] if x / 0:
                pass
    except ZeroDivisionError:
        pass
    try:
        match dt.Props(1, 2):
            case dt.Props(boom=b):
                pass
    except KeyError:
        pass
    print(sorted(set(dt.names(globals())) - before - {"before"}))
    """,
)

prog(
    "builtins-shadowed-by-parameters-and-locals",
    """
    def f(type, len, isinstance, list, tuple, str, object, next, getattr, issubclass, v):
        bytes = bytearray = dict = iter = hasattr = TypeError = id = None
        match v:
            case [a, *rest] if a:
                return ("seq", a, rest)
            case {"k": k, **others}:
                return ("map", k, others)
            case int(n) | float(n):
                return ("num", n)
            case (1, 2) | [3, 4]:
                return "pair"
            case _:
                return "other"
    for v in ([1, 2, 3], {"k": 1, "z": 2}, 5, 2.5, (3, 4), None):
        print(f(*[None] * 10, v))
    """,
)

prog(
    "builtins-shadowed-import-function",
    """
    def f(v, __import__=None, __builtins__=None):
        match v:
            case [a, *rest]:
                return ("seq", a, rest)
            case {"k": k}:
                return ("map", k)
            case str(s):
                return ("str", s)
        return "other"
    for v in ([1, 2], {"k": 3}, "s", 4):
        print(f(v))
    """,
)

prog(
    "builtins-shadowed-at-module-level",
    """
    import dataclasses
    @dataclasses.dataclass
    class P:
        x: int
        y: int
    len = type = isinstance = next = getattr = hasattr = issubclass = None
    tuple = list = str = object = bytes = bytearray = dict = iter = None
    for v in ([1, 2], {"a": 1}, P(1, 2), (1,), "s"):
        match v:
            case [a, b]:
                print("pair", a, b)
            case {"a": a, **rest}:
                print("map", a, rest)
            case P(x, y):
                print("P", x, y)
            case [*_]:
                print("seq")
            case _:
                print("other")
    """,
)

prog(
    "builtins-shadowed-in-class-body",
    """
    import dt
    class C:
        type = "a class attribute named type"
        len = isinstance = tuple = list = next = None
        match [1, 2]:
            case [a, b]:
                pair = (a, b)
        match {"k": 1}:
            case {"k": k}:
                key = k
    print(dt.dump(vars(C)))
    """,
)

prog(
    "builtins-shadowed-by-capture-in-earlier-case",
    """
    def f(v):
        match v:
            case [len, *type] if False:
                pass
            case [isinstance] if False:
                pass
            case {"k": next} if False:
                pass
            case [a, b]:
                print("two", a, b, len, type)
            case {"k": k, **rest}:
                print("map", k, rest)
            case _:
                print("other")
    f([1, 2]); f({"k": 3, "j": 4}); f(5)
    """,
)

prog(
    "class-body-patterns-refer-to-class-level-names",
    """
    import dt
    class Outer:
        class Inner:
            A = 1
            __match_args__ = ("v",)
            def __init__(self, v):
                self.v = v
        consts = Inner(7)
        match Inner(1):
            case Inner(consts.v):
                which = "value pattern via class-level name"
            case Inner(Inner.A):
                which = "class pattern and value pattern via class-level names"
        match [1, Inner(2)]:
            case [Inner.A, Inner(v)]:
                inner_v = v
        match {1: "x"}:
            case {Inner.A: x}:
                mapped = x
    print(dt.dump(vars(Outer)))
    """,
)

prog(
    "class-body-inside-function-sees-closure",
    """
    import dt
    def make(limit):
        class C:
            match [limit, 2]:
                case [n, m] if n > m:
                    big = True
                case [n, m]:
                    big = False
        return C
    print(dt.dump(vars(make(5)))); print(dt.dump(vars(make(1))))
    """,
)

prog(
    "big-mapping-pattern-many-keys",
    """
    def f(v):
        match v:
            case {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8,
                  "i": 9, "j": 10, "k": 11, "l": 12, "m": m, **rest}:
                return ("all", m, rest)
            case {"a": a}:
                return ("a", a)
    d = dict(zip("abcdefghijkl", range(1, 13)))
    print(f({**d, "m": 13, "n": 14})); print(f({"a": 0}))
    """,
)

prog(
    "big-class-pattern-many-keywords",
    """
    import types
    def f(v):
        match v:
            case types.SimpleNamespace(a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9, j=10,
                                       k=11, l=12):
                return "all twelve"
            case types.SimpleNamespace(a=a):
                return ("a", a)
    ns = types.SimpleNamespace(**dict(zip("abcdefghijkl", range(1, 13))))
    print(f(ns)); print(f(types.SimpleNamespace(a=0)))
    """,
)

prog(
    "big-deeply-nested-sequence-pattern",
    """
    def f(v):
        match v:
            case [[[[[[[[[[[[x]]]]]]]]]]]]:
                return ("deep", x)
            case [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, y]:
                return ("long", y)
            case _:
                return "no"
    v = "bottom"
    for _ in range(12):
        v = [v]
    print(f(v)); print(f(list(range(1, 22)) + ["end"])); print(f([[[1]]]))
    """,
)

prog(
    "big-or-pattern-many-alternatives",
    """
    def f(v):
        match v:
            case (0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15 | 16 | 17
                  | 18 | 19 | 20 | 21 | 22 | 23 | 24 | 25):
                return "small"
            case ([x] | (x, _) | {"x": x} | [_, _, x] | [_, _, _, x] | [_, _, _, _, x]
                  | [_, _, _, _, _, x] | [_, _, _, _, _, _, x] | [_, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, x] | [_, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, x] | [_, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, x]
                  | [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, x]):
                return ("last", x)
        return "no"
    print(f(25)); print(f([1])); print(f(list(range(22)))); print(f(26))
    """,
)

prog(
    "many-match-statements-in-one-function",
    """
    def f(v):
        out = []
"""
    + "".join(f"""
        match v:
            case [{i}, x{i}] | {{"k": x{i}, "i": {i}}}:
                out.append(("hit", {i}, x{i}))
            case _:
                pass
""" for i in range(40))
    + """
        return out
    print(f([7, "seven"])); print(f({"k": "k39", "i": 39})); print(f(None))
    """,
)

# ---------------------------------------------------------------------------
# Line numbers: tracebacks and sys.settrace events
# ---------------------------------------------------------------------------

prog(
    "lineno-traceback-exception-in-case-body",
    """
    def f(v):
        match v:
            case [x]:
                print("before")
                return 1 / x
            case _:
                return None
    f([1])
    f([0])
    """,
    expect_error=True,
)

prog(
    "lineno-traceback-exception-in-guard",
    """
    def f(v):
        match v:
            case 1:
                return "one"
            case [x] if 1 / x:
                return "inverse"
    f([2])
    f([0])
    """,
    expect_error=True,
)

prog(
    "lineno-traceback-exception-in-subject",
    """
    def subject():
        raise RuntimeError("subject failed")
    def f():
        x = 1
        match subject():
            case _:
                pass
    f()
    """,
    expect_error=True,
)

prog(
    "lineno-traceback-exception-in-pattern",
    """
    class K:
        __match_args__ = None
    def f(v):
        match v:
            case 0:
                pass
            case [a]:
                pass
            case K(x):
                pass
    f(K())
    """,
    expect_error=True,
)

prog(
    "lineno-traceback-exception-in-module-level-body",
    """
    import dt
    match [1, 0]:
        case [a, b]:
            print(a)
            print(a / b)
    """,
    expect_error=True,
)

prog(
    "lineno-traceback-line-attribute-of-caught-exception",
    """
    import sys
    def f(v):
        try:
            match v:
                case {"k": k} if k.missing:
                    pass
        except AttributeError:
            tb = sys.exc_info()[2]
            while tb.tb_next:
                tb = tb.tb_next
            print("raised at line", tb.tb_lineno)
    f({"k": 1})
    """,
)

prog(
    "trace-simple-cases",
    """
    def f(x):
        match x:
            case 1:
                return "one"
            case [a, b] if a > 0:
                return "pair"
            case {"k": v}:
                return v
            case _:
                return "other"
    f(1); f([1, 2]); f([0, 1]); f({"k": 3}); f(3)
    """,
    trace=True,
)

prog(
    "trace-body-statements-and-fall-off",
    """
    def f(x):
        y = 0
        match x:
            case int():
                y = 1
                y += 1
            case str():
                y = 2
        return y
    f(1); f("s"); f(None)
    """,
    trace=True,
)

prog(
    "trace-loop-with-break-continue",
    """
    def f():
        total = 0
        for i in range(5):
            match i:
                case 1:
                    continue
                case 3:
                    break
                case _:
                    total += i
        return total
    f()
    """,
    trace=True,
)

prog(
    "trace-nested-match-and-module-level",
    """
    def f(v):
        match v:
            case [a, *rest]:
                match rest:
                    case []:
                        return a
                    case _:
                        return rest
            case _:
                return None
    f([1]); f([1, 2]); f(0)
    match 5:
        case 4:
            pass
        case n:
            m = n
    """,
    trace=True,
)

prog(
    "trace-multiline-pattern-and-guard",
    """
    def f(x):
        match x:
            case [
                1,
                y,
            ] if (
                y > 0
            ):
                return y
            case _:
                return 0
    f([1, 2]); f([1, -1]); f(3)
    """,
    trace=True,
)

prog(
    "trace-class-body-match",
    """
    class C:
        match 3:
            case 1:
                one = 1
            case n if n > 2:
                big = n
    """,
    trace=True,
)


prog(
    "name-mangling-of-a-global-capture",
    """
    class K:
        def m(self, v):
            global __g
            match v:
                case [__g, __x]:
                    return __x, sorted(k for k in globals() if k.startswith("_K"))
    print(K().m([1, 2]), _K__g)
    """,
)

prog(
    # CPython cannot compile ``:=`` in a comprehension for a mangled nonlocal.
    "name-mangling-of-a-nonlocal-capture",
    """
    class K:
        def m(self, v):
            __y = 0
            def inner():
                nonlocal __y
                match v:
                    case [__y, *_]:
                        pass
            inner()
            return __y
    print(K().m([5, 6]), K().m(3))
    """,
)

prog(
    # Found by scripts/fuzz.py (seed 2026): the first alternative can only
    # raise, so only the second one ever binds ``c``.
    "or-pattern-first-alternative-always-raises",
    """
    import collections
    NT = collections.namedtuple("NT", "l r")
    def f(s):
        match s:
            case bool(_, c) | [*c]:
                return c
    for s in [NT(1, 2), [3], 5]:
        print(f(s))
    try:
        f(True)
    except TypeError as e:
        print(type(e).__name__, e)
    """,
)


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

ALL = tuple(PROGRAMS)
assert len({p.name for p in ALL}) == len(ALL), "duplicate program names"


def _oracle_outcomes(program: Program) -> dict:
    """CPython 3.10's outcome (required) and 3.12's (if installed)."""
    outcomes = {
        ORACLE_VERSION: cached_native(ALL, require_interpreter(ORACLE_VERSION))[
            program.name
        ]
    }
    for version in EXTRA_ORACLE_VERSIONS:
        exe = find_interpreter(version)
        if exe is not None:
            outcomes[version] = cached_native(ALL, exe)[program.name]
    return outcomes


# Differences from CPython that follow from lowering to plain source on the
# same lines (README, "Known limits"). Each is a strict xfail: when a change
# makes one of these behave like CPython, the test fails until it is removed
# from this table.
KNOWN_DEVIATIONS = {
    "helpers-not-left-after-exception-at-module-level": (
        "an exception while matching leaves the subject temporary in the namespace"
    ),
    "helpers-not-left-after-exception-in-class-body": (
        "an exception while matching leaves a class body's temporaries in globals()"
    ),
    "helpers-not-left-after-exception-in-function": (
        "an exception while matching leaves the subject temporary in locals()"
    ),
    "locals-after-unmatched-computed-subject": (
        "a computed subject stays in locals() when no case runs (no line to delete it on)"
    ),
    "locals-inside-guard": "a guard sees the subject temporary in locals()",
    "trace-multiline-pattern-and-guard-exact": (
        "a multi-line pattern is tested on one line, not line by line"
    ),
    "trace-multiline-pattern-and-guard-user-lines": (
        "a multi-line pattern is tested on one line, not line by line"
    ),
}
assert set(KNOWN_DEVIATIONS) <= {p.name for p in ALL}, "stale KNOWN_DEVIATIONS entry"


# Before 3.10 nothing records in which order classes were created and
# registered: the emulation of the type flags assumes each `register()` came
# before any subclass of the registered class was created (README, "Known
# limits"). These programs do otherwise. Output run on 3.10+ reads the flags.
KNOWN_EMULATION_DEVIATIONS = {
    "abc-registered-with-both-kinds-sequence-last": (
        "a class registered with both kinds is taken as a mapping"
    ),
    "abc-registration-after-subclass-with-other-first-base": (
        "a registration reaching a subclass created before it is not seen"
    ),
}
assert set(KNOWN_EMULATION_DEVIATIONS) <= {p.name for p in ALL}


# Deviations on some targets only: (program, target) -> reason.
KNOWN_TARGET_DEVIATIONS: Dict[Tuple[str, str], str] = {}


def _oldest_target(program: Program) -> str:
    """The oldest target the program's own (non-match) code can run on."""
    if ":=" in program.source:
        return "3.8"  # the program itself uses assignment expressions
    if "asyncio.run" in program.source or "dataclass" in program.source:
        return "3.7"  # asyncio.run and dataclasses are new in 3.7
    return "3.6"


def _version(text: str) -> tuple:
    return tuple(int(part) for part in text.split("."))


def _cases() -> list:
    cases = []
    for program in ALL:
        for target in TARGET_VERSIONS:
            marks = []
            reason = (
                KNOWN_DEVIATIONS.get(program.name)
                or KNOWN_EMULATION_DEVIATIONS.get(program.name)
                or KNOWN_TARGET_DEVIATIONS.get((program.name, target))
            )
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            if _version(target) < _version(_oldest_target(program)):
                marks.append(
                    pytest.mark.skip(
                        reason=f"the program's own code needs {_oldest_target(program)}"
                    )
                )
            cases.append(
                pytest.param(
                    program, target, id=f"{program.name}-py{target}", marks=marks
                )
            )
    return cases


@pytest.mark.parametrize(("program", "target"), _cases())
def test_transpiled_behaves_like_cpython(program: Program, target: str) -> None:
    oracles = _oracle_outcomes(program)
    exe = require_interpreter(target)
    actual = cached_transpiled(ALL, exe, target)[program.name]
    if not program.oracles_may_differ:
        # Compare with 3.10 only; 3.12 agrees (checked below).
        oracles = {ORACLE_VERSION: oracles[ORACLE_VERSION]}
    problem = explain_mismatch(program.source, oracles, target, actual)
    assert problem is None, problem


@pytest.mark.parametrize("program", ALL, ids=lambda p: p.name)
def test_program_is_a_sound_oracle(program: Program) -> None:
    """The program itself is right: it contains a match, runs cleanly on 3.10,
    prints something, and 3.10 and 3.12 agree (unless declared otherwise)."""
    assert re.search(r"^\s*match .*:$", program.source, re.M), "no match statement"
    oracles = _oracle_outcomes(program)
    native = oracles[ORACLE_VERSION]
    assert native.problem is None, native.problem
    if program.expect_error:
        assert native.error is not None, "expected an uncaught exception"
    else:
        assert native.error is None, f"program raised on 3.10: {native.error}"
    assert native.stdout or native.trace or native.error, "program observes nothing"
    if not program.oracles_may_differ:
        # sys.settrace events are compared with 3.10 only: 3.12 reports other
        # lines (module `call` at line 0, pattern lines again after a guard).
        ignore = ("trace",) if program.trace else ()
        problem = explain_oracle_disagreement(program.source, oracles, ignore)
        assert problem is None, problem


# Output is shipped once and run on every newer Python too (a wheel for
# >=3.9 runs on 3.13): 3.10+ take other paths in it (the type flags CPython
# itself reads), so the 3.9 output must also behave like native code there.
NEWER_RUNTIMES = ("3.10", "3.13")


def _newer_runtime_cases() -> list:
    cases = []
    for program in ALL:
        for runtime in NEWER_RUNTIMES:
            marks = []
            if program.trace and runtime != ORACLE_VERSION:
                # Native line events differ between CPython versions themselves.
                marks.append(
                    pytest.mark.skip(reason=f"traces are compared on {ORACLE_VERSION}")
                )
            elif program.name in KNOWN_DEVIATIONS:
                marks.append(
                    pytest.mark.xfail(
                        strict=True, reason=KNOWN_DEVIATIONS[program.name]
                    )
                )
            cases.append(
                pytest.param(
                    program, runtime, id=f"{program.name}-on{runtime}", marks=marks
                )
            )
    return cases


@pytest.mark.parametrize(("program", "runtime"), _newer_runtime_cases())
def test_output_for_39_behaves_like_native_on_newer_pythons(
    program: Program, runtime: str
) -> None:
    oracles = _oracle_outcomes(program)
    exe = require_interpreter(runtime)
    actual = cached_transpiled(ALL, exe, "3.9")[program.name]
    if not program.oracles_may_differ:
        oracles = {ORACLE_VERSION: oracles[ORACLE_VERSION]}
    problem = explain_mismatch(program.source, oracles, "3.9", actual)
    assert problem is None, problem
