"""What the lowering may take for granted, and what it may not (issue 19,
items 8 to 13): each program runs natively on CPython 3.10 and transpiled,
in both layouts, on 3.9 to 3.6, and must print the same.

- a class body whose namespace sees every store (``Enum``, a metaclass's
  ``__prepare__``) gets no temporary of the lowering;
- a fact about the subject (its kind, length, first item, a key's value)
  is not used after a guard that can run code;
- literal alternatives compare ``subject == literal``, never the reverse;
- a class's ``__match_args__`` is taken from its body only where nothing in
  the module can change it;
- a builtin the tests call is reached as the builtin where a star import or
  a write through ``globals()`` may have rebound its name;
- a capture declared ``global`` or ``nonlocal`` in a class body or function
  is stored there on every target.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, List, Tuple

import pytest

from difftest import (
    ORACLE_VERSION,
    TARGET_VERSIONS,
    Outcome,
    Program,
    cached_native,
    dedent,
    explain_mismatch,
    run_sources,
)
from interpreters import require_interpreter
from spam_transpile import transpile

LAYOUTS = ("keep-lines", "readable")

PROGRAMS: List[Program] = []
#: program name -> the oldest target its own code runs on
OLDEST: Dict[str, str] = {}


def prog(name: str, source: str, oldest: str = "3.6") -> None:
    PROGRAMS.append(Program(name, dedent(source)))
    OLDEST[name] = oldest


# A module the programs star-import from: it defines functions under the
# names of builtins, which print when called.
FAKE_BUILTINS = '''
import sys, types
fake = types.ModuleType("fake_builtins")
exec("""
import builtins
def _fake(name, real):
    def f(*args, **kwargs):
        print("user", name)
        return real(*args, **kwargs)
    return f
for _name in ("len", "isinstance", "getattr", "type", "locals", "globals", "setattr", "range"):
    globals()[_name] = _fake(_name, getattr(builtins, _name))
# Classes under the names of the builtin types (a pattern may name them too).
for _name in ("list", "dict", "tuple", "str"):
    globals()[_name] = builtins.type(_name, (getattr(builtins, _name),), {})
""", fake.__dict__)
sys.modules["fake_builtins"] = fake
'''


# ---------------------------------------------------------------------------
# 8. Class bodies whose namespace sees every store
# ---------------------------------------------------------------------------

prog(
    "enum-body-match-sequence",
    """
    import enum
    class Color(enum.Enum):
        RED = 1
        match [2, 3]:
            case [a, b] if a > 5:
                GREEN = 9
            case [c, d]:
                BLUE = d
            case _:
                pass
    print(list(Color), list(Color.__members__))
    """,
)

prog(
    "enum-body-match-shared-facts",
    """
    import enum
    def pair():
        return (4, 5)
    class Shade(enum.IntEnum):
        DARK = 1
        match pair():
            case [x]:
                LIGHT = x
            case [p, q] if q < 0:
                LIGHT = q
            case [x, y, z]:
                LIGHT = z
            case [s, t]:
                LIGHT = s + t
            case _:
                LIGHT = 0
    print(list(Shade))
    """,
)

# CPython stores a pattern's captures once it matched, in the order the
# pattern names them; an or-pattern's in the order of its first
# alternative, whichever matched. An Enum body makes the order its members'.
prog(
    "enum-body-capture-order",
    """
    import enum
    class Pt:
        __match_args__ = ("x", "y")
        def __init__(self, x, y):
            self.x, self.y = x, y
    def make(v):
        return v
    class A(enum.Enum):
        match (1, 2):
            case [f, d, 3] | (d, f):
                pass
    class B(enum.Enum):
        match make((1, (2, 3))):
            case (g, ([fff, ddd, 3] | Pt(ddd, fff) | (ddd, fff))):
                pass
    class C(enum.Enum):
        match make({"a": 1, "b": 2}):
            case {"b": p, "a": q, "c": 0} | {"a": q, "b": p}:
                pass
    class D(enum.Enum):
        match make([5, 6, 7]):
            case [h, [j, *k]] | [*k, h, j] as m:
                pass
    print([list(E.__members__) for E in (A, B, C, D)])
    """,
)

prog(
    "flag-body-match-tuple-subject",
    """
    import enum
    R = 1
    class Perm(enum.Flag):
        READ = 1
        match R + 1, R * 4:
            case (2, w):
                WRITE = 2
                EXEC = w
            case _:
                pass
    print(list(Perm), Perm.READ | Perm.EXEC)
    """,
)

prog(
    "enum-body-match-mapping-and-class",
    """
    import enum
    class Box:
        __match_args__ = ("v",)
        def __init__(self, v):
            self.v = v
    class Kind(enum.Enum):
        A = "a"
        match {"k": Box(2), "t": "x"}:
            case {"k": Box(v), **rest} if v > 10:
                B = "big"
            case {"k": Box(w), **others}:
                B = "b%d" % w
                C = str(sorted(others))
    print(list(Kind))
    """,
)

prog(
    "enum-body-no-case-matches",
    """
    import enum
    class E(enum.Enum):
        A = 1
        match A + 1:
            case 5:
                B = 5
            case [x]:
                B = x
        C = 3
    print(list(E))
    """,
)

prog(
    "recording-prepare-namespace",
    """
    class Recording(dict):
        def __init__(self):
            super().__init__()
            self.log = []
        def __setitem__(self, key, value):
            if not key.startswith("__"):
                self.log.append(("set", key))
            super().__setitem__(key, value)
        def __delitem__(self, key):
            self.log.append(("del", key))
            super().__delitem__(key)
        def pop(self, *args):
            self.log.append(("pop", args[0]))
            return super().pop(*args)
    class Meta(type):
        @classmethod
        def __prepare__(mcs, name, bases):
            return Recording()
        def __new__(mcs, name, bases, ns):
            print(name, ns.log)
            return super().__new__(mcs, name, bases, dict(ns))
    def subject():
        return [1, [2, 3]]
    class K(metaclass=Meta):
        match subject():
            case [1, [a]]:
                pass
            case [1, [a, b]] if b > 5:
                pass
            case [1, [a, b]]:
                c = a + b
        match subject(), 7:
            case (p, 8):
                pass
            case (p, q):
                pass
        match {"t": 1}:
            case {"t": 2}:
                pass
            case {"t": t}:
                pass
    print(sorted(k for k in vars(K) if not k.startswith("__")))
    """,
)

prog(
    "forbidding-prepare-namespace",
    """
    class NoDelete(dict):
        def __setitem__(self, key, value):
            if key.startswith("_") and not key.startswith("__"):
                raise KeyError("private name %s" % key)
            super().__setitem__(key, value)
        def __delitem__(self, key):
            raise KeyError("no deletion")
        def pop(self, *args):
            raise KeyError("no deletion")
    class Meta(type):
        @classmethod
        def __prepare__(mcs, name, bases):
            return NoDelete()
        def __new__(mcs, name, bases, ns):
            return super().__new__(mcs, name, bases, dict(ns))
    values = [3, 4]
    class K(metaclass=Meta):
        match values:
            case [x]:
                y = 1
            case [x, z]:
                y = 2
    print(K.x, K.y, K.z)
    """,
)

prog(
    "enum-body-in-function-and-recursion",
    """
    import enum
    def make(n):
        class E(enum.Enum):
            A = 0
            match n, n + 1:
                case (0, _):
                    B = 1
                case (m, k) if make(m - 1) is None:
                    B = 2
                case (p, q):
                    B = q + 10
        return E
    print(list(make(0)), list(make(2)))
    """,
)

prog(
    "enum-body-in-function-without-other-statements",
    """
    import enum
    out = []
    def make(v):
        class E(enum.Enum):
            A = 0
            match v:
                case [x]:
                    B = x
                case _:
                    B = -1
        out.append(list(E))
    make([5]); make(7)
    print(out)
    """,
)

prog(
    # The function has no line of simple statements of its own to declare
    # the temporaries on: they live in globals() while the body runs.
    "enum-body-in-function-with-no-simple-line",
    """
    import enum
    made = []
    def make(v):
        class E(enum.Enum):
            A = 0
            match v:
                case [x, y]:
                    B = x + y
                    made.append(B)
                case _:
                    made.append(-1)
    make([1, 2]); make("s")
    print(made, sorted(k for k in globals() if k.startswith("_spam_")))
    """,
)

prog(
    "enum-body-nested-classes",
    """
    import enum
    class Outer:
        class E(enum.Enum):
            A = 0
            match [1, 2]:
                case [1, x]:
                    B = x
    def f():
        class Mid:
            class E(enum.Enum):
                A = 0
                match [3, 4]:
                    case [3, x]:
                        B = x
        return Mid
    print(list(Outer.E), list(f().E))
    """,
)

prog(
    "class-body-temporaries-not-left",
    """
    import dt
    def subject():
        return [1, 2]
    class K:
        match subject():
            case [a]:
                pass
            case [a, b]:
                pass
        print(dt.names(locals()))
    print(dt.names(vars(K)))
    print(sorted(k for k in globals() if k.startswith("_spam_")))
    """,
)

prog(
    "class-body-threads-create-classes",
    """
    import enum, threading
    results = []
    def make(v):
        class E(enum.Enum):
            A = 0
            match v:
                case [x, y]:
                    B = x + y
                case _:
                    B = -1
        results.append(E.B.value)
    threads = [threading.Thread(target=make, args=([i, i],)) for i in range(1, 30)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(sorted(results))
    """,
)

# ---------------------------------------------------------------------------
# 9. Facts do not outlive a guard that can run code
# ---------------------------------------------------------------------------

prog(
    "guard-changes-length",
    """
    def f(v):
        match v:
            case [a] if v.append(9) or False:
                return "one"
            case [a, b]:
                return ("two", a, b)
            case [a, b, c]:
                return "three"
            case _:
                return "other"
    print(f([1]), f([1, 2]), f(5))
    def g(v):
        match v:
            case [a, b] if v.pop() and False:
                return "two"
            case [a]:
                return ("one", a)
            case [a, *rest]:
                return rest
    print(g([1, 2]))
    """,
)

prog(
    "facts-in-each-run-of-cases",
    """
    import dt, re
    def names(namespace):
        # (the readable layout's own variables stay locals, by design)
        own = re.compile(r"(subject|size)(_[0-9]+)?")
        return [n for n in dt.names(namespace) if not own.fullmatch(n)]
    def f(v):
        match dt.same(v):
            case [x] if v.append(9) or False:
                print("a", names(locals()))
            case [x] | [x, 0]:
                print("b", names(locals()))
            case [x, y] if v.append(8) or False:
                print("c", names(locals()))
            case [x, y]:
                print("d", names(locals()))
            case [x, y, z]:
                print("e", x, y, z, names(locals()))
            case [x, y, z, w]:
                print("f", x, y, z, w, names(locals()))
            case {"t": "a", **kw} if kw.pop("t", 1):
                print("g", names(locals()))
            case {"t": "a"}:
                print("h", names(locals()))
            case {"t": "b"} | {"t": "c"}:
                print("i", names(locals()))
            case {"t": t}:
                print("j", t, names(locals()))
            case _:
                print("other", names(locals()))
    for v in ([7], [1, 2], [5, 0], [3, 4, 5], {"t": "a"}, {"t": "c"}, {"t": 1}, 3):
        f(v)
    """,
)

prog(
    "guard-changes-length-computed-subject",
    """
    store = []
    def sub():
        return store
    def f():
        match sub():
            case [] if store.extend([1, 2]) or False:
                return "empty"
            case []:
                return "still empty"
            case [a, b]:
                return ("two", a, b)
            case _:
                return "other"
    print(f())
    """,
)

prog(
    "guard-changes-a-key",
    """
    def g(m):
        match m:
            case {"k": 1} if m.update(k=2) or False:
                return "a"
            case {"k": 2}:
                return "b"
            case {"k": 1}:
                return "c"
            case {"k": 1, "j": _}:
                return "d"
            case {"k": 1, "i": _}:
                return "e"
            case _:
                return "z"
    print(g({"k": 1}))
    def h(event):
        match event:
            case {"type": "a", "n": n} if event.pop("type") and False:
                return "a"
            case {"type": "a"}:
                return "still a"
            case {"type": "b"}:
                return "b"
            case {"type": "c"}:
                return "c"
            case {"n": n}:
                return ("n", n)
    print(h({"type": "a", "n": 1}))
    """,
)

prog(
    "guard-changes-first-item",
    """
    def f(words):
        match words:
            case ["go", d] if words.__setitem__(0, "look") or False:
                return "go"
            case ["go", d]:
                return ("go again", d)
            case ["look", d]:
                return ("look", d)
            case ["take", d]:
                return "take"
            case ["drop", d]:
                return "drop"
            case _:
                return "other"
    print(f(["go", "north"]))
    """,
)

prog(
    "guard-changes-kind",
    """
    from collections.abc import Sequence
    class Plain:
        def __init__(self, items):
            self.items = items
        def __len__(self):
            return len(self.items)
        def __getitem__(self, i):
            return self.items[i]
    class Seq(Plain, Sequence):
        pass
    def f(v):
        match v:
            case {"k": _}:
                return "mapping"
            case Plain() if setattr(v, "__class__", Seq) or False:
                return "plain"
            case [a, b]:
                return ("seq", a, b)
            case [a, b, c]:
                return "three"
            case _:
                return "other"
    print(f(Plain([1, 2])))
    """,
)

prog(
    "guard-changes-length-module-and-class",
    """
    v = [1]
    match v:
        case [a] if v.append(9) or False:
            r = "one"
        case [a, b]:
            r = ("two", a, b)
        case [a, b, c]:
            r = "three"
        case _:
            r = "other"
    print(r)
    class K:
        w = [1]
        match w:
            case [a] if w.append(9) or False:
                r = "one"
            case [a, b]:
                r = ("two", a, b)
            case [a, b, c]:
                r = "three"
            case _:
                r = "other"
    print(K.r)
    """,
)

prog(
    "guard-that-runs-no-code-keeps-sharing",
    """
    def route(line):
        match line.split():
            case [verb, *args] if True and args:
                return verb, args
            case ["quit"]:
                return "quit"
            case ["look"]:
                return "look"
            case [verb]:
                return verb
            case _:
                return None
    print(route("go north"), route("quit"), route("look"), route("x"), route(""))
    """,
)

prog(
    "guard-with-await-changes-length",
    """
    import asyncio
    async def grow(v):
        v.append(9)
        return False
    async def f(v):
        match v:
            case [a] if await grow(v):
                return "one"
            case [a, b]:
                return ("two", a, b)
            case _:
                return "other"
    print(asyncio.run(f([1])))
    """,
    oldest="3.7",
)

# ---------------------------------------------------------------------------
# 10. Literal alternatives compare ``subject == literal``
# ---------------------------------------------------------------------------

prog(
    "literal-alternatives-subject-on-the-left",
    """
    class I(int):
        def __eq__(self, other):
            print("I.eq", other)
            return False
        __hash__ = int.__hash__
    class F(float):
        def __eq__(self, other):
            print("F.eq", other)
            return True
        __hash__ = float.__hash__
    def f(x):
        match x:
            case 1.0 | -0.0:
                return "float"
            case 1j | 2+0j:
                return "complex"
            case 1 | 2:
                return "int"
            case _:
                return "other"
    for x in (I(1), F(2.0), 1, 1.0, 2j, 2.0, "s"):
        print(f(x))
    def g(m):
        match m:
            case {"k": 1.0 | 2.0}:
                return "key"
            case [1.0 | 2.5, _]:
                return "item"
            case _:
                return "other"
    print(g({"k": I(1)}), g([I(1), 0]), g({"k": F(1.0)}))
    class S(str):
        def __eq__(self, other):
            print("S.eq", other)
            return False
        __hash__ = str.__hash__
    class B(bytes):
        def __eq__(self, other):
            print("B.eq", other)
            return NotImplemented
        __hash__ = bytes.__hash__
    class O:
        def __eq__(self, other):
            print("O.eq", other)
            return NotImplemented
    def h(x):
        # int, str and bytes alternatives: ``x in (...)`` calls what
        # ``x == lit`` calls
        match x:
            case "a" | "b":
                return "text"
            case 1 | -2:
                return "int"
            case b"x" | b"y":
                return "bytes"
            case _:
                return "other"
    print(h(S("a")), h(O()), h(I(1)), h(B(b"x")), h(True), h(-2.0))
    """,
)

prog(
    "literal-alternatives-at-module-and-class-level",
    """
    class I(int):
        def __eq__(self, other):
            print("I.eq", other)
            return False
        __hash__ = int.__hash__
    x = I(1)
    match x:
        case 1.0 | 3.0:
            print("float")
        case _:
            print("other")
    class K:
        match x:
            case 1.0 | 3.0:
                r = "float"
            case _:
                r = "other"
    print(K.r)
    """,
)

prog(
    "literal-run-split-with-int-subclass",
    """
    class I(int):
        def __eq__(self, other):
            print("I.eq", other)
            return int(self) == other
        __hash__ = int.__hash__
    def f(op):
        match op:
            case 0: return "a0"
            case 1: return "a1"
            case 2: return "a2"
            case 3: return "a3"
            case 4: return "a4"
            case 5: return "a5"
            case 6: return "a6"
            case 7: return "a7"
            case 8: return "a8"
            case 9: return "a9"
            case 10: return "a10"
            case 11: return "a11"
            case 12: return "a12"
            case 13: return "a13"
            case 14: return "a14"
            case 15: return "a15"
            case 16: return "a16"
            case 17: return "a17"
            case 1.5 | 2.5: return "float"
            case _: return "other"
    print(f(I(3)), f(I(13)), f(3), f(2.5), f(True), f(I(40)))
    """,
)

# ---------------------------------------------------------------------------
# 11. ``__match_args__`` only from the body where nothing can change it
# ---------------------------------------------------------------------------

prog(
    "match-args-reassigned-later",
    """
    class C:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    C.__match_args__ = ("b",)
    def f(x):
        match x:
            case C(v):
                return v
    print(f(C()))
    """,
)

prog(
    "match-args-set-through-setattr",
    """
    class C:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    class D:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    setattr(C, "__match_args__", ("b",))
    name = "__match_args__"
    setattr(D, name, ("b",))
    def f(x):
        match x:
            case C(v) | D(v):
                return v
    print(f(C()), f(D()))
    """,
)

prog(
    "match-args-a-list",
    """
    class D:
        __match_args__ = ["a"]
        def __init__(self):
            self.a = 1
    def g(x):
        try:
            match x:
                case D(v):
                    return v
        except TypeError as e:
            return str(e)
    print(g(D()))
    """,
)

prog(
    "match-args-from-init-subclass",
    """
    class Base:
        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            cls.__match_args__ = ("b",)
    class C(Base):
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    def f(x):
        match x:
            case C(v):
                return v
    print(f(C()))
    """,
)

prog(
    "match-args-from-a-metaclass-of-a-base",
    """
    class Meta(type):
        def __init__(cls, name, bases, ns):
            super().__init__(name, bases, ns)
            type.__setattr__(cls, "__match_args__", ("b",))
    class Base(metaclass=Meta):
        pass
    class C(Base):
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    def f(x):
        match x:
            case C(v):
                return v
    print(f(C()))
    """,
)

prog(
    "match-args-of-a-class-defined-twice",
    """
    class C:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    def f(x):
        match x:
            case C(v):
                return v
    first = C()
    class C:
        __match_args__ = ("b",)
        def __init__(self):
            self.a, self.b = 1, 2
    print(f(first), f(C()))
    """,
)

prog(
    "match-args-changed-in-the-body",
    """
    class C:
        __match_args__ = ("a",)
        __match_args__ += ("b",)
        def __init__(self):
            self.a, self.b = 1, 2
    def decorate(cls):
        cls.__match_args__ = ("b",)
        return cls
    @decorate
    class D:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    def f(x):
        match x:
            case C(u, v):
                return u, v
            case D(v):
                return v
    print(f(C()), f(D()))
    """,
)

prog(
    "match-args-of-a-star-imported-name",
    """
    import sys, types
    m = types.ModuleType("classes_mod")
    exec('''
    class C:
        __match_args__ = ("b",)
        def __init__(self):
            self.a, self.b = 1, 2
    ''', m.__dict__)
    sys.modules["classes_mod"] = m
    class C:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    from classes_mod import *
    def f(x):
        match x:
            case C(v):
                return v
    print(f(C()))
    """,
)

prog(
    "dataclass-fields-of-a-function-named-dataclass",
    """
    import dataclasses
    def dataclass(cls):
        cls = dataclasses.dataclass(cls)
        cls.__match_args__ = ("y",)
        return cls
    @dataclass
    class P:
        x: int
        y: int
    def f(p):
        match p:
            case P(v):
                return v
    print(f(P(1, 2)))
    """,
    oldest="3.7",
)

prog(
    "dataclass-with-an-init-of-its-own",
    """
    from dataclasses import dataclass
    @dataclass
    class P:
        x: int
        y: int
        def __init__(self, x):
            self.x = x
    def f(p):
        match p:
            case P(a, b):
                return a, b
            case P(a):
                return a
    print(f(P(1)))
    """,
    oldest="3.7",
)

prog(
    "match-args-still-known-where-nothing-changes-them",
    """
    class C:
        __match_args__ = ("a",)
        def __init__(self):
            self.a, self.b = 1, 2
    class D(C):
        pass
    def f(x):
        match x:
            case D(v):
                return ("D", v)
            case C(v):
                return ("C", v)
    print(f(C()), f(D()))
    """,
)

# ---------------------------------------------------------------------------
# 12. Builtins reached as builtins where their names may be rebound
# ---------------------------------------------------------------------------

prog(
    "star-import-of-builtin-names",
    FAKE_BUILTINS + dedent("""
    from fake_builtins import *
    class Box:
        __match_args__ = ("v",)
        def __init__(self, v):
            self.v = v
    def f(v):
        match v:
            case [a, b]:
                return "two"
            case {"k": int(k)}:
                return "k"
            case Box(x) if x:
                return "box"
            case Box(v=x):
                return "box kw"
            case str() | bytes():
                return "text"
            case _:
                return "other"
    print(f([1, 2, 3]), f({"k": 1}), f(Box(0)), f("s"))
    match [1, 2]:
        case [x, y]:
            print("module", x, y)
    class K:
        match [1, 2]:
            case [x, y]:
                print("class", x, y)
    """),
)

prog(
    "globals-written-with-builtin-names",
    """
    import sys
    def fake(name):
        def f(*args):
            print("user", name)
            return False
        return f
    globals()["len"] = fake("len")
    globals().update(isinstance=fake("isinstance"))
    setattr(sys.modules[__name__], "getattr", fake("getattr"))
    def f(v):
        match v:
            case [a, b]:
                return "two"
            case {"k": 1}:
                return "k"
            case object(real=r):
                return r
            case _:
                return "other"
    print(f([1, 2]), f({"k": 1}), f(5))
    """,
)

prog(
    "vars-written-with-builtin-names",
    """
    def fake(*args):
        print("user type")
        return None
    vars()["type"] = fake
    def f(v):
        match v:
            case [a, b]:
                return "two"
            case {"k": 1}:
                return "k"
            case _:
                return "other"
    print(f([1, 2]), f({"k": 1}), f(5))
    """,
)

prog(
    # ``__import__`` is a name of the module's too: the builtins are reached
    # through ``__builtins__``, a dict in an imported module.
    "builtin-names-and-import-bound-by-the-module",
    """
    def g(__import__, len, isinstance, type):
        return 0
    def f(v):
        match v:
            case [x, y]:
                return x
            case {"k": k}:
                return k
    print(f([1, 2]), f({"k": 3}), f(4))
    """,
)

# ---------------------------------------------------------------------------
# 13. Captures declared global or nonlocal
# ---------------------------------------------------------------------------

prog(
    "class-body-global-and-nonlocal-captures",
    """
    z = 0
    class K:
        global z
        match [5]:
            case [z]:
                pass
    print(z, hasattr(K, "z"))
    def outer():
        w = 0
        class L:
            nonlocal w
            match (7, 8):
                case (w, q) if q > 7:
                    pass
        return w, hasattr(L, "w"), L.q
    print(outer())
    class M:
        global __g
        match [1, 2]:
            case [__g, *__rest]:
                pass
    print(_M__g, M._M__rest)
    def outer2():
        u = 0
        class A:
            class B:
                nonlocal u
                global gg
                match {"u": 1, "v": 2}:
                    case {"x": u, "v": gg} | {"u": u, "v": gg} if gg > 1:
                        pass
        return u, gg, sorted(k for k in vars(A.B) if not k.startswith("__"))
    print(outer2())
    """,
)

prog(
    "function-global-and-nonlocal-captures-at-every-depth",
    """
    g = 0
    def f1(v):
        global g
        match v:
            case [g]:
                return "one"
            case {"g": g} if g > 0:
                return "map"
            case (g, _) | [_, _, g]:
                return "alt"
        return "none"
    print(f1([3]), g, f1({"g": 4}), g, f1((5, 6)), g, f1([1, 2, 7]), g)
    def outer():
        n = 0
        def middle():
            def inner(v):
                nonlocal n
                match v:
                    case [n]:
                        pass
                    case {"n": n} if n:
                        pass
                    case (n, _) | [_, _, n]:
                        pass
                return n
            return inner
        i = middle()
        out = [i([1]), n, i({"n": 2}), n, i((3, 0)), n]
        class C:
            def m(self, v):
                nonlocal n
                match v:
                    case [n, m]:
                        return m
        out += [C().m([4, 5]), n]
        return out
    print(outer())
    """,
)

prog(
    # 3.10 gives the ast module's node types ``__match_args__`` (their
    # ``_fields``); on 3.9 and 3.8 the helper reads ``_fields`` as 3.10
    # would, for those types only (a user's AST subclass inherits them).
    # Before 3.8 ``ast.parse`` makes other nodes (``Num``, ``Str``).
    "ast-node-types-match-positionally",
    """
    import ast
    class Mine(ast.BinOp):
        pass
    class Foo(ast.AST):
        _fields = ("x",)
    def f(node):
        match node:
            case ast.BinOp(left, ast.Add(), ast.Constant(value)):
                return ("add", type(left).__name__, value)
            case ast.Constant(value, kind):
                return ("const", value, kind)
            case ast.Name(id) if id == "x":
                return ("x",)
            case ast.Call(ast.Name("len"), [arg]):
                return ("len", type(arg).__name__)
            case Foo(x):
                return ("foo", x)
            case _:
                return "other"
    for text in ["1 + 2", "x + 3", "'s'", "x", "len(y)", "y"]:
        print(f(ast.parse(text, mode="eval").body))
    print(f(Mine(ast.Name("a"), ast.Add(), ast.Constant(5))))
    try:
        print(f(Foo()))
    except TypeError as error:
        print("TypeError", error)
    """,
    oldest="3.8",
)


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

ALL = tuple(PROGRAMS)
assert len({p.name for p in ALL}) == len(ALL), "duplicate program names"


def _version(text: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@functools.lru_cache(maxsize=None)
def _transpiled(exe: str, target: str, layout: str) -> Dict[str, Outcome]:
    """Every program transpiled for ``target`` in ``layout`` and run on ``exe``
    (one process; a program the transpiler refuses reports why)."""
    jobs = []
    refused: Dict[str, Outcome] = {}
    for program in ALL:
        if _version(target) < _version(OLDEST[program.name]):
            continue
        try:
            text = transpile(
                program.source, target=target, filename=program.filename, layout=layout
            )
        except Exception as exc:
            problem = f"transpile() raised {type(exc).__name__}: {exc}"
            refused[program.name] = Outcome("", None, (), None, program.source, problem)
            continue
        jobs.append((program.name, program.filename, text, ""))
    ran = {job[0]: outcome for job, outcome in zip(jobs, run_sources(exe, jobs))}
    return {**ran, **refused}


def _cases() -> List[Any]:
    cases = []
    for program in ALL:
        for layout in LAYOUTS:
            for target in TARGET_VERSIONS:
                marks = []
                if _version(target) < _version(OLDEST[program.name]):
                    marks.append(
                        pytest.mark.skip(reason="the program needs a newer Python")
                    )
                cases.append(
                    pytest.param(
                        program,
                        target,
                        layout,
                        id=f"{program.name}-{layout}-py{target}",
                        marks=marks,
                    )
                )
    return cases


@pytest.mark.slow
@pytest.mark.parametrize(("program", "target", "layout"), _cases())
def test_transpiled_behaves_like_cpython(
    program: Program, target: str, layout: str
) -> None:
    native = cached_native(ALL, require_interpreter(ORACLE_VERSION))[program.name]
    assert native.problem is None and native.error is None, native
    actual = _transpiled(require_interpreter(target), target, layout)[program.name]
    problem = explain_mismatch(program.source, {ORACLE_VERSION: native}, target, actual)
    assert problem is None, problem


@pytest.mark.slow
@pytest.mark.parametrize("program", ALL, ids=lambda p: p.name)
def test_program_is_a_sound_oracle(program: Program) -> None:
    assert re.search(r"^\s*match .*:$", program.source, re.M), "no match statement"
    native = cached_native(ALL, require_interpreter(ORACLE_VERSION))[program.name]
    assert native.problem is None, native.problem
    assert native.error is None, f"program raised on 3.10: {native.error}"
    assert native.stdout, "program prints nothing"


# ---------------------------------------------------------------------------
# Names bound behind the tool's back: both trees give the same answer
# ---------------------------------------------------------------------------

UNSEEN_BINDINGS = [
    ("from m import *", True),
    ("from m import (a, b)", False),
    ("globals()['len'] = f", True),
    ("globals().update(len=f)", True),
    ("globals().setdefault('len', f)", True),
    ("del globals()['x']", True),
    ("g = globals()", True),
    ("exec('len = 1', globals())", True),
    ("[a, globals()['x']] = 1, 2", True),
    ("for globals()['x'] in []: pass", True),
    ("x = globals()['len']", False),
    ("x = globals().get('len')", False),
    ("x = 'len' in globals()", False),
    ("x = [k for k in globals()]", False),
    ("x = dict(globals())", False),
    ("x = sorted(globals())", False),
    ("vars()['len'] = f", True),
    ("locals()['len'] = f", True),
    ("def f():\n    vars()['len'] = 1", False),
    ("def f():\n    return '{x}'.format(**locals())", False),
    ("def f():\n    globals()['len'] = 1", True),
    ("exec('len = 1')", True),
    ("exec(code, ns)", False),
    ("exec(code, globals=ns)", False),
    ("exec(*args)", True),
    ("eval('f()')", True),
    ("import sys\nsetattr(sys.modules[__name__], 'len', f)", True),
    ("import sys\nm = sys.modules.get(__name__)", True),
    ("import importlib\nm = importlib.import_module(__name__)", True),
    ("m = __import__(__name__)", True),
    ("import logging\nlog = logging.getLogger(__name__)", False),
    ("if __name__ == '__main__':\n    main()", False),
]


@pytest.mark.parametrize(("source", "expected"), UNSEEN_BINDINGS)
def test_names_bound_where_the_tree_does_not_show_them(
    source: str, expected: bool
) -> None:
    import ast

    import libcst as cst

    from spam_transpile.lowering.dynamic_names import (
        ast_binds_unseen,
        cst_binds_unseen,
        may_rebind,
    )

    tree = ast.parse(source)
    assert ast_binds_unseen(tree, list(ast.walk(tree))) is expected
    found = may_rebind(source) and cst_binds_unseen(cst.parse_module(source))
    assert found is expected


def test_a_module_that_binds_no_name_unseen_spells_builtins_plainly() -> None:
    source = dedent("""
        import logging
        log = logging.getLogger(__name__)
        def f(v):
            match v:
                case [a, b]:
                    return a
                case {"k": int(k)}:
                    return k
        if __name__ == "__main__":
            print(globals().get("f"))
        """)
    for layout in LAYOUTS:
        out = transpile(source, target="3.9", layout=layout)
        assert "builtins" not in out
        assert "len(v) == 2" in out


KNOWN_CLASS_SOURCES = [
    ("class C:\n    __match_args__ = ('a',)", True),
    ("class C:\n    __match_args__ = ('a',)\nC.__match_args__ = ('b',)", False),
    ("class C:\n    __match_args__ = ('a',)\nD = C\nD.__match_args__ = ('b',)", False),
    (
        "class C:\n    __match_args__ = ('a',)\nclass D:\n    __match_args__ = ('a',)\n"
        "D.__match_args__ = ('b',)",
        True,
    ),
    ("class C:\n    __match_args__ = ('a',)\nsetattr(C, '__match_args__', ())", False),
    ("class C:\n    __match_args__ = ('a',)\nsetattr(C, 'other', ())", True),
    ("class C:\n    __match_args__ = ('a',)\nsetattr(C, name, ())", False),
    ("class C:\n    __match_args__ = ('a',)\ntype.__setattr__(C, name, ())", False),
    (
        "class C:\n    __match_args__ = ('a',)\nclass B:\n    def __setattr__(self, n, v):\n"
        "        super().__setattr__(n, v)",
        False,
    ),
    ("class C:\n    __match_args__ = ['a']", False),
    ("class C:\n    __match_args__ = ('a',)\n    __match_args__ += ('b',)", False),
    (
        "class C:\n    __match_args__ = ('a',)\n    if x:\n        __match_args__ = ()",
        False,
    ),
    ("class C:\n    __match_args__ = ('a',)\n    locals()['x'] = 1", False),
    (
        "class C:\n    __match_args__ = ('a',)\n    def f(self):\n        __match_args__ = 1",
        True,
    ),
    ("@deco\nclass C:\n    __match_args__ = ('a',)", False),
    ("class C(metaclass=M):\n    __match_args__ = ('a',)", False),
    ("class B:\n    pass\nclass C(B):\n    __match_args__ = ('a',)", True),
    ("class B(X):\n    pass\nclass C(B):\n    __match_args__ = ('a',)", False),
    (
        "class B(metaclass=M):\n    pass\nclass C(B):\n    __match_args__ = ('a',)",
        False,
    ),
    (
        "class B:\n    def __init_subclass__(cls):\n        pass\n"
        "class C(B):\n    __match_args__ = ('a',)",
        False,
    ),
    ("class C:\n    __match_args__ = ('a',)\nclass C:\n    pass", False),
    # its own __init_subclass__ runs for its subclasses, not for itself
    (
        "class C:\n    __match_args__ = ('a',)\n"
        "    def __init_subclass__(cls):\n        pass",
        True,
    ),
    (
        "class A:\n    def __init_subclass__(cls):\n        pass\n"
        "class B(A):\n    pass\nclass C(B):\n    __match_args__ = ('a',)",
        False,
    ),
    ("from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int", True),
    ("import dataclasses\n@dataclasses.dataclass\nclass C:\n    a: int", True),
    ("def dataclass(c):\n    return c\n@dataclass\nclass C:\n    a: int", False),
    (
        "from dataclasses import dataclass\ndataclass = f\n@dataclass\nclass C:\n    a: int",
        False,
    ),
    ("from m import *\nclass C:\n    __match_args__ = ('a',)", False),
    # the standard abc.ABC and abc.ABCMeta add nothing to pattern matching
    ("from abc import ABC\nclass C(ABC):\n    __match_args__ = ('a',)", True),
    ("import abc\nclass C(abc.ABC):\n    __match_args__ = ('a',)", True),
    (
        "from abc import ABC\nclass B(ABC):\n    pass\n"
        "class C(B):\n    __match_args__ = ('a',)",
        True,
    ),
    (
        "from abc import ABCMeta\nclass C(metaclass=ABCMeta):\n"
        "    __match_args__ = ('a',)",
        True,
    ),
    (
        "import abc as a\nclass C(metaclass=a.ABCMeta):\n    __match_args__ = ('a',)",
        True,
    ),
    # not the standard one, or bound again
    ("from m import ABC\nclass C(ABC):\n    __match_args__ = ('a',)", False),
    (
        "from abc import ABC\nABC = f()\nclass C(ABC):\n    __match_args__ = ('a',)",
        False,
    ),
    ("import abc\nclass C(abc.ABCMeta):\n    __match_args__ = ('a',)", False),
    (
        "from abc import ABCMeta\nclass C(metaclass=ABCMeta, x=1):\n"
        "    __match_args__ = ('a',)",
        False,
    ),
]


@pytest.mark.parametrize(("source", "known"), KNOWN_CLASS_SOURCES)
def test_match_args_known_only_where_nothing_changes_them(
    source: str, known: bool
) -> None:
    import ast

    from spam_transpile.lowering.facts import module_facts

    facts = module_facts(ast.parse(source))
    assert (facts.known_class("C") is not None) is known


def test_fields_of_a_dataclass_with_its_own_init_are_not_taken_as_set() -> None:
    import ast

    from spam_transpile.lowering.facts import module_facts

    source = (
        "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int\n"
        "    def __init__(self):\n        pass"
    )
    known = module_facts(ast.parse(source)).known_class("C")
    assert known is not None and known.match_args == ("a",) and known.fields == ()


# ---------------------------------------------------------------------------
# Guards that cannot run code keep the facts shared
# ---------------------------------------------------------------------------

GUARDS = [
    # (pattern, guard, may run code)
    ("[x, *rest]", "rest", False),
    ("[x, *rest]", "not rest", False),
    ("[x, *rest]", "True and rest", False),
    ("[x, *rest]", "len(rest) > 2", False),
    ("[x, *rest]", "len(rest) > 2 and x is None", False),
    ("{'k': v, **kw}", "kw or len(kw) == 0", False),
    ("[x, *rest]", "x is not None", False),
    ("[x, *rest]", "(n := len(rest)) > 1", False),
    ("[x, *rest]", "1 if rest else 2", False),
    ("[x, *rest]", "x", True),
    ("[x, *rest]", "not x", True),
    ("[x, *rest]", "x > 0", True),
    ("[x, *rest]", "x in rest", True),
    ("[x, *rest]", "rest == [1]", True),
    ("[x, *rest]", "rest and x", True),
    ("[x, *rest]", "f(rest)", True),
    ("[x, *rest]", "rest[0]", True),
    ("[x, *rest]", "x.y", True),
    ("[x, *rest] | (x, *rest)", "rest", False),
    ("[*x] | {'k': x}", "x", True),
    ("[x, *rest]", "await rest", True),
    ("[x, *rest]", "f'{x}'", True),
]


@pytest.mark.parametrize(("pattern", "guard", "expected"), GUARDS)
def test_which_guards_may_run_code(pattern: str, guard: str, expected: bool) -> None:
    import libcst as cst

    from spam_transpile.lowering.guards import may_run_code

    def builtin(name: str) -> str:
        return name

    source = f"async def f(v):\n    match v:\n        case {pattern} if {guard}:\n            pass\n"
    function = cst.parse_module(source).body[0]
    case = function.body.body[0].cases[0]  # type: ignore[attr-defined]
    assert may_run_code(case.guard, case.pattern, True, builtin) is expected
    # Outside a function a name's load may run code (a class namespace).
    assert may_run_code(case.guard, case.pattern, False, builtin) is True


def test_len_may_run_code_where_the_module_binds_the_name() -> None:
    import libcst as cst

    from spam_transpile.lowering.guards import may_run_code

    source = "def f(v):\n    match v:\n        case [*r] if len(r):\n            pass\n"
    case = cst.parse_module(source).body[0].body.body[0].cases[0]  # type: ignore
    assert may_run_code(case.guard, case.pattern, True, lambda n: "_b." + n)
