"""Tuple subjects written by hand for Python 3.9: fizzbuzz on the two
remainders, the door state machine branching on the event's kind first.

Same results as scripts/bench/fixtures/tuples.py. `run(n)` returns a checksum.
"""

from typing import List, Tuple, Union

WORKLOAD = 40_000
MASK = 0xFFFFFFFF
Event = Union[str, Tuple[str, int]]


def fizzbuzz(n: int) -> str:
    by3 = n % 3
    by5 = n % 5
    if by3 == 0:
        return "FizzBuzz" if by5 == 0 else "Fizz"
    if by5 == 0:
        return "Buzz"
    return str(n)


def transition(state: str, event: Event, code: int) -> str:
    if isinstance(event, tuple):
        verb, key = event
        if verb == "lock":
            if state == "closed":
                return "locked" if key > 0 else "closed"
        elif verb == "unlock":
            if state == "locked":
                return "closed" if key == code else "alarm"
            if state == "alarm" and key == code:
                return "closed"
    elif event == "open":
        if state == "closed":
            return "open"
    elif event == "close":
        if state == "open":
            return "closed"
    elif event == "reset":
        return "closed"
    return state


def quadrant(x: int, y: int) -> int:
    if x == 0 or y == 0:
        return 0
    if y > 0:
        return 1 if x > 0 else 2
    return 3 if x < 0 else 4


EVENTS: List[Event] = [
    "open",
    "close",
    ("lock", 42),
    "open",
    "knock",
    ("unlock", 7),
    ("unlock", 42),
    "open",
    "knock",
    "close",
    ("lock", 0),
    ("lock", 42),
    ("unlock", 42),
    "reset",
    "close",
    ("lock", 9),
    "kick",
    ("unlock", 42),
]


def run(n: int) -> int:
    checksum = 0
    state = "closed"
    events = EVENTS
    count = len(events)
    for i in range(n):
        checksum = (checksum * 31 + len(fizzbuzz(i))) & MASK
        state = transition(state, events[i % count], 42)
        checksum += len(state) + quadrant(i % 7 - 3, i % 5 - 2)
    return checksum & MASK
