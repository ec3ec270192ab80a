"""Red-black tree insertion, Okasaki style, written by hand for Python 3.9:
`balance` tests the four red-red shapes with attribute checks.

Same results as scripts/bench/fixtures/rbtree.py. `run(n)` returns a checksum.
"""

from dataclasses import dataclass
from enum import Enum
from typing import Optional


class Color(Enum):
    RED = 0
    BLACK = 1


@dataclass
class Node:
    color: Color
    left: Optional["Node"]
    key: int
    right: Optional["Node"]


WORKLOAD = 2_000
RED = Color.RED
BLACK = Color.BLACK


def balance(
    color: Color, left: Optional[Node], key: int, right: Optional[Node]
) -> Node:
    if color is BLACK:
        if left is not None and left.color is RED:
            inner = left.left
            if inner is not None and inner.color is RED:
                return Node(
                    RED,
                    Node(BLACK, inner.left, inner.key, inner.right),
                    left.key,
                    Node(BLACK, left.right, key, right),
                )
            inner = left.right
            if inner is not None and inner.color is RED:
                return Node(
                    RED,
                    Node(BLACK, left.left, left.key, inner.left),
                    inner.key,
                    Node(BLACK, inner.right, key, right),
                )
        if right is not None and right.color is RED:
            inner = right.left
            if inner is not None and inner.color is RED:
                return Node(
                    RED,
                    Node(BLACK, left, key, inner.left),
                    inner.key,
                    Node(BLACK, inner.right, right.key, right.right),
                )
            inner = right.right
            if inner is not None and inner.color is RED:
                return Node(
                    RED,
                    Node(BLACK, left, key, right.left),
                    right.key,
                    Node(BLACK, inner.left, inner.key, inner.right),
                )
    return Node(color, left, key, right)


def insert_into(tree: Optional[Node], key: int) -> Node:
    if tree is None:
        return Node(RED, None, key, None)
    if key < tree.key:
        return balance(tree.color, insert_into(tree.left, key), tree.key, tree.right)
    if key > tree.key:
        return balance(tree.color, tree.left, tree.key, insert_into(tree.right, key))
    return tree


def insert(tree: Optional[Node], key: int) -> Node:
    root = insert_into(tree, key)
    if root.color is RED:
        return Node(BLACK, root.left, root.key, root.right)
    return root


def contains(tree: Optional[Node], key: int) -> bool:
    while tree is not None:
        if key < tree.key:
            tree = tree.left
        elif key > tree.key:
            tree = tree.right
        else:
            return True
    return False


def black_height(tree: Optional[Node]) -> int:
    height = 1
    while tree is not None:
        if tree.color is BLACK:
            height += 1
        tree = tree.left
    return height


def run(n: int) -> int:
    checksum = 0
    tree = None
    seed = 12345
    for i in range(n):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        key = seed % 5000
        tree = insert(tree, key)
        if contains(tree, (key * 7) % 5000):
            checksum += 1
        if i % 1000 == 999:
            checksum = (checksum * 31 + black_height(tree)) & 0xFFFFFFFF
            tree = None
    return (checksum * 31 + black_height(tree)) & 0xFFFFFFFF
