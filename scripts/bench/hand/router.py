"""JSON-like event router, written by hand for Python 3.9: `dict.get` and
isinstance checks per event type (the events are parsed JSON: dicts, lists,
str and int, no None values).

Same results as scripts/bench/fixtures/router.py. `run(n)` returns a checksum.
"""

from typing import Any, Dict, List

WORKLOAD = 12_000
MASK = 0xFFFFFFFF


def route(event: Dict[str, Any]) -> int:
    if not isinstance(event, dict):
        return -1
    kind = event.get("type")
    if kind == "click":
        x = event.get("x")
        y = event.get("y")
        button = event.get("button")
        if (
            isinstance(x, int)
            and isinstance(y, int)
            and (button == "left" or button == "right")
        ):
            return x * 3 + y + len(button)
        return 10 + len(event) - 1
    if kind == "key":
        key = event.get("key")
        if isinstance(key, str):
            mods = event.get("mods")
            if isinstance(mods, list) and "ctrl" in mods:
                return 100 + len(key) + len(mods)
            return 200 + len(key)
    elif kind == "resize":
        size = event.get("size")
        if isinstance(size, list):
            if len(size) == 2:
                width, height = size
                if isinstance(width, int) and isinstance(height, int):
                    return width * height % 997
        elif isinstance(size, str):
            return 300 + len(size)
    elif kind == "http":
        request = event.get("request")
        if isinstance(request, dict):
            method = request.get("method")
            path = request.get("path")
            if method == "GET" and isinstance(path, str):
                return 400 + path.count("/")
            if (method == "POST" or method == "PUT") and isinstance(path, str):
                body = request.get("body")
                if isinstance(body, dict):
                    ident = body.get("id")
                    if isinstance(ident, int):
                        return 500 + len(method) + len(path) + ident + len(body) - 1
            if isinstance(method, str):
                return 600 + len(method)
    elif kind == "message":
        user = event.get("user")
        text = event.get("text")
        if isinstance(user, dict) and isinstance(text, str):
            name = user.get("name")
            if isinstance(name, str):
                roles = user.get("roles")
                if isinstance(roles, list) and roles and roles[0] == "admin":
                    return 700 + len(name) + len(roles) - 1 + len(text) + len(event) - 3
                return 800 + len(name) + len(text)
    elif kind == "batch":
        events = event.get("events")
        if isinstance(events, list):
            return sum(route(inner) for inner in events) & MASK
    if isinstance(kind, str):
        if len(event) == 1:
            return 900 + len(kind)
        return 1000 + len(kind)
    return -1


EVENTS: List[Dict[str, Any]] = [
    {"type": "click", "x": 10, "y": 20, "button": "left"},
    {"type": "click", "x": 3, "y": 4, "button": "middle"},
    {"type": "click", "x": "3", "y": 4, "button": "right"},
    {"type": "click", "x": 7, "y": 8, "button": "right", "time": 12},
    {"type": "key", "key": "c", "mods": ["ctrl", "shift"]},
    {"type": "key", "key": "v", "mods": ["alt"]},
    {"type": "key", "key": "Enter"},
    {"type": "key", "key": 13},
    {"type": "resize", "size": [800, 600]},
    {"type": "resize", "size": [800, 600, 2]},
    {"type": "resize", "size": "1024x768"},
    {"type": "http", "request": {"method": "GET", "path": "/users/42/posts"}},
    {
        "type": "http",
        "request": {
            "method": "POST",
            "path": "/users",
            "body": {"id": 7, "name": "ann", "email": "ann@example.org"},
        },
    },
    {
        "type": "http",
        "request": {"method": "PUT", "path": "/users/7", "body": {"id": 7}},
    },
    {"type": "http", "request": {"method": "PUT", "path": "/users/7", "body": {}}},
    {"type": "http", "request": {"method": "DELETE", "path": "/users/7"}},
    {"type": "http", "request": "GET /"},
    {
        "type": "message",
        "user": {"name": "root", "roles": ["admin", "ops"]},
        "text": "deploying",
        "channel": "ops",
    },
    {"type": "message", "user": {"name": "bob", "roles": ["dev"]}, "text": "hi"},
    {"type": "message", "user": {"name": "eve"}, "text": "hello"},
    {"type": "message", "user": "mallory", "text": "hello"},
    {
        "type": "batch",
        "events": [
            {"type": "click", "x": 1, "y": 2, "button": "left"},
            {"type": "key", "key": "q"},
            {"type": "ping"},
        ],
    },
    {"type": "ping"},
    {"type": "ping", "seq": 4},
    {"kind": "orphan"},
    {"type": 5},
]


def run(n: int) -> int:
    events = EVENTS
    count = len(events)
    checksum = 0
    for i in range(n):
        checksum = (checksum * 31 + route(events[i % count])) & MASK
    return checksum
