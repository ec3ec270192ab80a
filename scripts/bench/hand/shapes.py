"""A scene of shapes over an `abc.ABC` class hierarchy, written by hand for
Python 3.9: isinstance checks, then the attributes.

Same results as scripts/bench/fixtures/shapes.py. `run(n)` returns a checksum.
"""

from abc import ABC, abstractmethod
from typing import List, Tuple

WORKLOAD = 100
MASK = 0xFFFFFFFF


class Shape(ABC):
    @abstractmethod
    def name(self) -> str: ...


class Circle(Shape):
    def __init__(self, r: int) -> None:
        self.r = r

    def name(self) -> str:
        return "circle"


class Rect(Shape):
    def __init__(self, w: int, h: int) -> None:
        self.w, self.h = w, h

    def name(self) -> str:
        return "rect"


class Group(Shape):
    def __init__(self, children: List[Shape]) -> None:
        self.children = children

    def name(self) -> str:
        return "group"


class Move(Shape):
    def __init__(self, dx: int, dy: int, shape: Shape) -> None:
        self.dx, self.dy, self.shape = dx, dy, shape

    def name(self) -> str:
        return "move"


EMPTY = Group([])


def simplify(shape: Shape) -> Shape:
    if isinstance(shape, Circle):
        return EMPTY if shape.r == 0 else shape
    if isinstance(shape, Rect):
        return EMPTY if shape.w == 0 or shape.h == 0 else shape
    if isinstance(shape, Group):
        children = shape.children
        if not children:
            return EMPTY
        if len(children) == 1:
            return simplify(children[0])
        kept = [simplify(child) for child in children]
        return Group([c for c in kept if c is not EMPTY])
    if isinstance(shape, Move):
        dx, dy, inner = shape.dx, shape.dy, shape.shape
        if dx == 0 and dy == 0:
            return simplify(inner)
        if isinstance(inner, Move):
            return simplify(Move(dx + inner.dx, dy + inner.dy, inner.shape))
        inner = simplify(inner)
        return EMPTY if inner is EMPTY else Move(dx, dy, inner)
    return shape


def area(shape: Shape) -> int:
    if isinstance(shape, Circle):
        return 3 * shape.r * shape.r
    if isinstance(shape, Rect):
        return shape.w * shape.h
    if isinstance(shape, Group):
        return sum(area(child) for child in shape.children)
    if isinstance(shape, Move):
        return area(shape.shape)
    return 0


def bbox(shape: Shape) -> Tuple[int, int, int, int]:
    if isinstance(shape, Circle):
        r = shape.r
        return (-r, -r, r, r)
    if isinstance(shape, Rect):
        return (0, 0, shape.w, shape.h)
    if isinstance(shape, Move):
        x0, y0, x1, y1 = bbox(shape.shape)
        dx, dy = shape.dx, shape.dy
        return (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
    if isinstance(shape, Group) and shape.children:
        first, *rest = shape.children
        x0, y0, x1, y1 = bbox(first)
        for child in rest:
            a, b, c, d = bbox(child)
            x0, y0, x1, y1 = min(x0, a), min(y0, b), max(x1, c), max(y1, d)
        return (x0, y0, x1, y1)
    return (0, 0, 0, 0)


def scene(seed: int, depth: int) -> Tuple[Shape, int]:
    seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
    pick = (seed >> 8) % 7 if depth > 0 else (seed >> 8) % 3
    size = (seed >> 12) % 4
    if pick == 0:
        return Circle(size), seed
    if pick in (1, 2):
        return Rect(size, (seed >> 16) % 4), seed
    if pick in (3, 4):
        children = []
        for _ in range((seed >> 14) % 4):
            child, seed = scene(seed, depth - 1)
            children.append(child)
        return Group(children), seed
    inner, seed = scene(seed, depth - 1)
    return Move(size % 2, (seed >> 10) % 3 - 1, inner), seed


def run(n: int) -> int:
    seed = 12345
    scenes = []
    for _ in range(20):
        shape, seed = scene(seed, 5)
        scenes.append(shape)
    checksum = 0
    for _ in range(n):
        for shape in scenes:
            small = simplify(shape)
            x0, y0, x1, y1 = bbox(small)
            checksum = (checksum * 31 + area(small) + x1 - x0 + y1 - y0) & MASK
            checksum = (checksum + len(small.name())) & MASK
    return checksum
