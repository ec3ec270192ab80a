"""Classes as their declarations describe them, across a project's modules
(spam_transpile/lowering/project_facts.py): what the readable layout trusts."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path
from typing import Dict

import pytest

from cli_invoke import invoke, make_tree
from interpreters import require_interpreter
from spam_transpile import transpile
from spam_transpile.lowering.facts import KnownClass
from spam_transpile.lowering.project_facts import ProjectFacts, declared_classes

DECLARATIONS = """\
import collections
import typing
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple


@dataclass
class Base:
    a: int
    b: int = 0


@dataclass(frozen=True)
class Child(Base):
    c: int = 1
    hidden: list = field(init=False)
    count: typing.ClassVar[int] = 0


@dataclass(match_args=False)
class NoArgs:
    x: int


class Pair(NamedTuple):
    left: int
    right: int


Point = collections.namedtuple("Point", "x y")
Line = typing.NamedTuple("Line", [("start", int), ("end", int)])


class Plain:
    kind = "plain"
    size: int

    def __init__(self, size, name):
        self.size = size
        self.name = name
        if size:
            self.later = 1


class Literal:
    __match_args__ = ("size", "name")

    def __init__(self):
        self.size, self.name = 1, "one"


class Sub(Literal):
    pass


class Color(Enum):
    RED = 1


class Twice:
    pass


Twice = None
"""


def test_declarations_give_the_fields_and_match_args() -> None:
    classes = declared_classes(ast.parse(DECLARATIONS))
    assert classes["Base"] == KnownClass(("a", "b"), ("a", "b"))
    child = classes["Child"]
    assert child.match_args == ("a", "b", "c")
    # a field(init=False) without a default is not there until set
    assert "hidden" not in child.fields and {"a", "b", "c", "count"} <= set(
        child.fields
    )
    assert classes["NoArgs"].match_args is None
    # a named tuple: a tuple of as many items as it has fields
    # (its fields, and a frozen dataclass's, no instance can rebind)
    pair = ("left", "right")
    assert classes["Pair"] == KnownClass(pair, pair, items=pair, immutable=pair)
    point = ("x", "y")
    assert classes["Point"] == KnownClass(point, point, items=point, immutable=point)
    line = ("start", "end")
    assert classes["Line"] == KnownClass(line, line, items=line, immutable=line)
    assert "c" in child.immutable and not classes["Base"].immutable
    plain = classes["Plain"]
    # only what ``__init__`` sets before it may branch; an annotation alone
    # sets nothing
    assert plain.match_args is None and set(plain.fields) == {"kind", "size", "name"}
    assert classes["Literal"].match_args == ("size", "name")
    # inherited: only what the exact facts know (looked up at run time)
    assert classes["Sub"].match_args is None
    assert classes["Color"].match_args is None  # Enum's metaclass: unknown
    assert "Twice" not in classes


@pytest.mark.parametrize(
    "source, name, match_args, absent",
    [
        # the module shows that a declaration may not hold: not trusted
        (
            "class C:\n    __match_args__ = ('a',)\nC.__match_args__ = ('b',)\n",
            "C",
            None,
            (),
        ),
        (
            "class C:\n    __match_args__ = ('a',)\n    __match_args__ += ('b',)\n",
            "C",
            None,
            (),
        ),
        (
            "from dataclasses import dataclass\n@dataclass\nclass P:\n"
            "    x: int\n    y: int\n    def __init__(self, x):\n        self.x = x\n",
            "P",
            ("x", "y"),
            ("y",),
        ),
        (
            "class Meta(type): pass\nclass B(metaclass=Meta): pass\n"
            "class C(B):\n    __match_args__ = ('a',)\n",
            "C",
            None,
            (),
        ),
    ],
)
def test_what_the_module_may_change_is_not_trusted(
    source: str, name: str, match_args: object, absent: tuple
) -> None:
    known = declared_classes(ast.parse(source))[name]
    assert known.match_args == match_args
    assert not set(absent) & set(known.fields)


PROPERTIES = """\
class Alert:
    def __init__(self, level):
        self.level = level

    @property
    def severity(self):
        return len(self.level)

    @property
    def twice(self):
        return 2

    twice = compute()

    @staticmethod
    def make():
        return Alert("x")
"""


@pytest.mark.parametrize(
    "source, trusted, untrusted",
    [
        (PROPERTIES, ("level", "severity"), ("twice", "make")),
        # ``property`` bound by the module: not the builtin
        (PROPERTIES + "property = staticmethod\n", ("level",), ("severity",)),
        # a decorator may replace the class
        ("@tagged\n" + PROPERTIES, (), ("level", "severity")),
    ],
)
def test_a_property_the_class_declares_is_an_attribute(
    source: str, trusted: tuple, untrusted: tuple
) -> None:
    fields = declared_classes(ast.parse(source))["Alert"].fields
    assert set(trusted) <= set(fields)
    assert not set(untrusted) & set(fields)


def test_nothing_is_trusted_where_names_are_bound_unseen() -> None:
    assert declared_classes(ast.parse(DECLARATIONS + "from os import *\n")) == {}


PACKAGE: Dict[str, str] = {
    "shop/__init__.py": "from .models import Kind, LineItem\n",
    "shop/models.py": """\
from dataclasses import dataclass
from enum import Enum
from typing import List


class Kind(Enum):
    BOOK = "book"
    FOOD = "food"


@dataclass
class LineItem:
    sku: str
    quantity: int
    unit_price: float
    kind: Kind = Kind.BOOK


@dataclass
class Order:
    id: int
    items: List[LineItem]
""",
    "shop/pricing.py": """\
from .models import Kind, LineItem


def price(item):
    match item:
        case LineItem(kind=Kind.FOOD, quantity=q, unit_price=p) if q >= 10:
            return q * p * 0.9
        case LineItem(_, q, p):
            return q * p
        case _:
            return None
""",
    "shop/orders.py": """\
import shop.models as m
from shop import LineItem


def first(order):
    match order:
        case m.Order(items=[LineItem(sku=sku), *_]):
            return sku
        case m.Order():
            return "empty"
    return None
""",
    "run.py": """\
from shop.models import LineItem, Order, Kind
from shop.pricing import price
from shop.orders import first


class Fake:
    quantity = 2


items = [
    LineItem("a", 12, 1.0, Kind.FOOD),
    LineItem("b", 2, 3.0),
    Fake(),
    None,
]
print([price(i) for i in items])
print(first(Order(1, [LineItem("x", 1, 1.0)])), first(Order(2, [])), first(3))
""",
}


def _readable(path: Path, project: ProjectFacts) -> str:
    return transpile(
        path.read_text("utf-8"), filename=str(path), layout="readable", project=project
    )


def test_classes_of_other_modules_are_read_as_declared(tmp_path: Path) -> None:
    make_tree(tmp_path, PACKAGE)
    project = ProjectFacts()
    pricing = _readable(tmp_path / "shop/pricing.py", project)
    assert (
        "    if not isinstance(item, LineItem):\n"
        "        return None\n"
        "    if item.kind == Kind.FOOD and item.quantity >= 10:\n"
        "        q, p = item.quantity, item.unit_price\n"
    ) in pricing
    # positional sub-patterns by the dataclass's fields, no presence tests
    assert (
        "        return q * p * 0.9\n"
        "    q, p = item.quantity, item.unit_price\n"
        "    return q * p\n"
    ) in pricing
    assert "_spam" not in pricing and "hasattr" not in pricing
    consulted = project.consulted(str(tmp_path / "shop/pricing.py"))
    assert str(tmp_path.resolve() / "shop/models.py") in consulted
    # through ``import shop.models as m`` and the package's re-export
    orders = _readable(tmp_path / "shop/orders.py", project)
    assert "isinstance(order, m.Order)" in orders
    assert "isinstance(order.items[0], LineItem)" in orders
    assert "_spam" not in orders and "hasattr" not in orders


def test_the_package_runs_as_natively(tmp_path: Path) -> None:
    source = make_tree(tmp_path / "src", PACKAGE)
    out = tmp_path / "out"
    result = invoke([str(source), "-o", str(out), "--layout", "readable", "-j", "1"])
    assert result.exit_code == 0, result.stderr
    runs = []
    for version, folder in (("3.10", source), ("3.9", out), ("3.8", out)):
        ran = subprocess.run(
            [require_interpreter(version), "run.py"],
            cwd=folder,
            capture_output=True,
            timeout=60,
        )
        assert ran.returncode == 0, ran.stderr.decode()
        runs.append(ran.stdout)
    assert runs[0] == runs[1] == runs[2]


def test_a_file_alone_still_works_with_fewer_facts() -> None:
    source = PACKAGE["shop/pricing.py"]
    out = transpile(source, layout="readable")
    # imported: trusted to be a class, but its fields are not known
    assert "isinstance(item, LineItem)" in out
    assert "_spam.attrs(item, LineItem, 3, ())" in out


def test_a_change_to_a_module_the_output_relied_on_is_seen(tmp_path: Path) -> None:
    source = make_tree(tmp_path / "src", PACKAGE)
    out = tmp_path / "out"
    args = [str(source), "-o", str(out), "--layout", "readable", "-j", "1"]
    assert invoke(args).exit_code == 0
    before = (out / "shop/pricing.py").read_text("utf-8")
    assert "item.unit_price" in before
    # the field order changes: the positional pattern reads other fields
    models = source / "shop/models.py"
    models.write_text(
        models.read_text("utf-8").replace(
            "    quantity: int\n    unit_price: float\n",
            "    unit_price: float\n    quantity: int\n",
        ),
        "utf-8",
    )
    again = invoke(args)
    assert again.exit_code == 0, again.stderr
    after = (out / "shop/pricing.py").read_text("utf-8")
    assert after != before
    assert "    q, p = item.unit_price, item.quantity\n" in after


TAGGED = """\
def tagged_union(cls):
    return cls


class case:
    def __get__(self, obj, owner=None):
        raise AttributeError("another case")


@tagged_union
class Card:
    face = case()


class Plain:
    face = case()
    size = 3
    parts = (1, 2)


def f(card):
    match card:
        case Card(face=1):
            return "card face"
        case Plain(face=2, size=3):
            return "plain"
        case _:
            return "other"


print(f(Card()), f(Plain()))
"""


def test_what_a_decorator_or_a_call_gives_is_not_trusted(tmp_path: Path) -> None:
    # Found on a real project (expression's tagged unions): a case's
    # attribute is a descriptor raising AttributeError on the other cases.
    classes = declared_classes(ast.parse(TAGGED))
    assert classes["Card"].fields == ()
    assert set(classes["Plain"].fields) == {"size", "parts"}
    out = transpile(TAGGED, layout="readable")
    # read where a missing attribute is no match, never as ``card.face``
    assert "card.face" not in out and 'getattr(card, "face", None) == 1' in out
    assert "card.size == 3" in out and 'hasattr(card, "size")' not in out
    from like_native import assert_runs_like_native

    assert assert_runs_like_native(TAGGED, out, tmp_path) == b"other other\n\n"
