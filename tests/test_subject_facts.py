"""Facts shared by the cases of one match statement (keep-lines layout).

Each row gives a function's match statement and the lines of its output
that show the facts: the match line and the case lines.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from spam_transpile import transpile
from like_native import assert_runs_like_native

# Room for the helper before the function, so it stays off the match line.
PRELUDE = '"""A module."""\n' + "\n" * 8


def _lines(source: str) -> str:
    out = transpile(PRELUDE + textwrap.dedent(source), target="3.9")
    body = out.split("def f(", 1)[1].splitlines()[1:]
    return "\n".join(line.strip() for line in body if line.strip())


# Cases dispatching on a mapping's ``type``, after a first case given.
KEYED_CASES = """\
def f(event):
    match event:
        case {first}:
            return x
        case {{"type": "key", "key": str(key)}}:
            return key
        case {{"type": None}}:
            return None
        case {{"type": str(kind), **rest}}:
            return kind, rest
        case _:
            return 'other'
"""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            """\
            def f(state, event):
                match state, event:
                    case "a", [x]:
                        return x
                    case "b", [x, y]:
                        return y
                    case _, [*rest]:
                        return rest
                    case _:
                        return None
            """,
            """\
            state; event; _spam_kind1 = 1 if type(event) is tuple or type(event) is list else 0 if type(event) is str else _spam.kind(event)
            if state == "a" and _spam_kind1 == 1 and len(event) == 1 and [x := event[0]]:
            return x
            elif state == "b" and _spam_kind1 == 1 and len(event) == 2 and [x := event[0], y := event[1]]:
            return y
            elif _spam_kind1 == 1 and [rest := _spam.items(event, 0, 0)]:
            return rest
            elif state is state:
            return None""",
            id="element-of-a-tuple-subject-kind-computed-once",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case {"a": 1}:
                        return 1
                    case {"b": 2}:
                        return 2
                    case {"c": 3}:
                        return 3
                    case _:
                        return 0
            """,
            """\
            _spam_kind1 = 2 if type(v) is dict else _spam.kind(v)
            if _spam_kind1 == 2 and v.get("a") == 1:
            return 1
            elif _spam_kind1 == 2 and v.get("b") == 2:
            return 2
            elif _spam_kind1 == 2 and v.get("c") == 3:
            return 3
            elif v is v:
            return 0""",
            id="local-subject-kind-computed-once-when-always-deleted",
        ),
        pytest.param(
            """\
            def f(v):
                print(locals())
                match v:
                    case [1]:
                        return 1
                    case [_, 2]:
                        return 2
                    case [*_, 3]:
                        return 3
            """,
            """\
            print(locals())
            v
            if (type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1) and len(v) == 1 and v[0] == 1:
            return 1
            elif (type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1) and len(v) == 2 and v[1] == 2:
            return 2
            elif (type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1) and len(v) >= 1 and v[len(v) - 1] == 3:
            return 3""",
            id="local-subject-no-temporary-when-no-case-may-run-and-the-frame-is-read",
        ),
        pytest.param(
            """\
            def f(v):
                print(locals())
                match v:
                    case {"a": 1}:
                        for x in v:
                            pass
                    case {"b": 2}:
                        return 2
                    case {"c": 3}:
                        return 3
                    case _:
                        return 0
            """,
            """\
            print(locals())
            v
            if (type(v) is dict or _spam.kind(v) == 2) and v.get("a") == 1:
            for x in v:
            pass
            elif (type(v) is dict or _spam.kind(v) == 2) and v.get("b") == 2:
            return 2
            elif (type(v) is dict or _spam.kind(v) == 2) and v.get("c") == 3:
            return 3
            elif v is v:
            return 0""",
            id="local-subject-no-temporary-when-a-body-cannot-delete-it-and-the-frame-is-read",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case [1]:
                        return 1
                    case [_, 2]:
                        return 2
                    case [*_, 3]:
                        return 3
            """,
            """\
            _spam_len1 = len(v) if (type(v) is tuple or type(v) is list or type(v) is not str and _spam.kind(v) == 1) else -1
            if _spam_len1 == 1 and v[0] == 1:
            return 1
            elif _spam_len1 == 2 and v[1] == 2:
            return 2
            elif _spam_len1 >= 1 and v[len(v) - 1] == 3:
            return 3""",
            # nothing reads the frame: a temporary left there is unseen
            id="local-subject-facts-shared-where-the-frame-is-never-read",
        ),
        pytest.param(
            """\
            def f(v):
                match v:
                    case {"a": 1}:
                        for x in v:
                            pass
                    case {"b": 2}:
                        return 2
                    case {"c": 3}:
                        return 3
                    case _:
                        return 0
            """,
            """\
            _spam_kind1 = 2 if type(v) is dict else _spam.kind(v)
            if _spam_kind1 == 2 and v.get("a") == 1:
            for x in v:
            pass
            elif _spam_kind1 == 2 and v.get("b") == 2:
            return 2
            elif _spam_kind1 == 2 and v.get("c") == 3:
            return 3
            elif v is v:
            return 0""",
            id="local-subject-facts-shared-where-a-body-cannot-delete-them",
        ),
        pytest.param(
            """\
            def f(line):
                match line.split():
                    case ["go", d]:
                        return d
                    case ["look"] | ["look", "around"]:
                        return 1
                    case _:
                        return 0
            """,
            """\
            _spam_subject1 = line.split(); _spam_len2 = len(_spam_subject1) if (type(_spam_subject1) is tuple or type(_spam_subject1) is list or type(_spam_subject1) is not str and _spam.kind(_spam_subject1) == 1) else -1
            if _spam_len2 == 2 and _spam_subject1[0] == "go" and [d := _spam_subject1[1]]:
            return d
            elif ((_spam_len2 == 1 and _spam_subject1[0] == "look") or (_spam_len2 == 2 and _spam_subject1[0] == "look" and _spam_subject1[1] == "around")):
            return 1
            elif _spam_subject1 is _spam_subject1:
            return 0""",
            id="shared-length-answers-the-kind-of-or-pattern-alternatives",
        ),
        pytest.param(
            """\
            def f(line):
                match line.split():
                    case ["go", d]:
                        return d
                    case ["look" | "l"]:
                        return 1
                    case ["take", *things]:
                        return things
                    case [verb, *_]:
                        return verb
            """,
            """\
            _spam_subject1 = line.split(); _spam_len2 = len(_spam_subject1) if (type(_spam_subject1) is tuple or type(_spam_subject1) is list or type(_spam_subject1) is not str and _spam.kind(_spam_subject1) == 1) else -1; _spam_first3 = _spam_subject1[0] if _spam_len2 >= 1 else None
            if _spam_len2 == 2 and _spam_first3 == "go" and [d := _spam_subject1[1]]:
            return d
            elif _spam_len2 == 1 and _spam_first3 in ("look", "l"):
            return 1
            elif _spam_len2 >= 1 and _spam_first3 == "take" and [things := _spam.items(_spam_subject1, 1, 0)]:
            return things
            elif _spam_len2 >= 1 and [verb := _spam_first3]:
            return verb""",
            id="first-item-read-once-when-the-cases-dispatch-on-it",
        ),
        pytest.param(
            """\
            def f(line):
                match line.split():
                    case ["go", d]:
                        return d
                    case ["look", "at", thing] | ["look", thing]:
                        return thing
                    case _:
                        return 0
            """,
            """\
            _spam_subject1 = line.split(); _spam_len2 = len(_spam_subject1) if (type(_spam_subject1) is tuple or type(_spam_subject1) is list or type(_spam_subject1) is not str and _spam.kind(_spam_subject1) == 1) else -1; _spam_first3 = _spam_subject1[0] if _spam_len2 >= 1 else None
            if _spam_len2 == 2 and _spam_first3 == "go" and [d := _spam_subject1[1]]:
            return d
            elif ((_spam_len2 == 3 and _spam_first3 == "look" and _spam_subject1[1] == "at") or (_spam_len2 == 2 and _spam_first3 == "look")) and [thing := (_spam_subject1[2] if _spam_len2 == 3 and _spam_first3 == "look" and _spam_subject1[1] == "at" else _spam_subject1[1])]:
            return thing
            elif _spam_subject1 is _spam_subject1:
            return 0""",
            id="a-capture-of-alternatives-of-two-lengths-reads-the-shared-length",
        ),
        pytest.param(
            KEYED_CASES.format(first='{"type": "click", "x": int(x)}'),
            """\
            _spam_key2 = event.get("type", _spam.MISSING) if (type(event) is dict or _spam.kind(event) == 2) else _spam.MISSING
            if _spam_key2 == "click" and isinstance(x := event.get("x"), int):
            return x
            elif _spam_key2 == "key" and isinstance(key := event.get("key"), str):
            return key
            elif _spam_key2 is None:
            return None
            elif isinstance(kind := _spam_key2, str) and [rest := _spam.rest(event, ("type",))]:
            return kind, rest
            elif event is event:
            return 'other'""",
            id="value-under-a-key-every-case-dispatches-on-looked-up-once",
        ),
        pytest.param(
            # The first case never looks ``type`` up: nor does the match line.
            KEYED_CASES.format(first="[x]"),
            """\
            _spam_kind1 = 1 if type(event) is tuple or type(event) is list else 0 if type(event) is str else 2 if type(event) is dict else _spam.kind(event); _spam_len2 = len(event) if _spam_kind1 == 1 else -1
            if _spam_len2 == 1 and [x := event[0]]:
            return x
            elif _spam_kind1 == 2 and event.get("type") == "key" and isinstance(key := event.get("key"), str):
            return key
            elif _spam_kind1 == 2 and event.get("type", _spam.MISSING) is None:
            return None
            elif _spam_kind1 == 2 and isinstance(kind := event.get("type"), str) and [rest := _spam.rest(event, ("type",))]:
            return kind, rest
            elif event is event:
            return 'other'""",
            id="value-under-a-key-the-first-case-does-not-look-up-is-not-shared",
        ),
    ],
)
def test_shared_facts(source: str, expected: str) -> None:
    assert _lines(source) == textwrap.dedent(expected)


def test_first_item_text_written_in_the_module_keeps_the_reads() -> None:
    # Replacing text is only safe when every occurrence is the lowering's.
    source = """\
        def f(v):
            match v:
                case ["go", "v[0]"]:
                    return 0
                case ["look" | "l"]:
                    return 1
                case ["take", *things]:
                    return things
                case [verb, *_]:
                    return verb
                case _:
                    return None
        """
    lines = _lines(source)
    assert "_spam_len" in lines and "_spam_first" not in lines
    assert "_spam_first" in _lines(source.replace('"v[0]"', '"v"'))


def test_first_item_read_elsewhere_in_the_module_is_still_shared() -> None:
    # Only the patterns' string literals join the text the lowering writes:
    # the function's own ``v[0]`` (or another function's) is no obstacle.
    source = """\
        def f(v):
            if v and v[0] == "quit":
                return None
            match v:
                case ["go", "north"]:
                    return 0
                case ["look" | "l"]:
                    return v[0]
                case ["take", *things]:
                    return things
                case [verb, *_]:
                    return verb
                case _:
                    return None
        """
    lines = _lines(source)
    assert "_spam_first" in lines
    assert "return v[0]" in lines
    assert 'if v and v[0] == "quit":' in lines


UNBOUND_SUBJECT = """\
def f(flag):
    if flag:
        v = [1, 2]
    match v:
        case [1]:
            return 1
        case [_, 2]:
            return 2
        case [*_, 3]:
            return 3


print(f(True))
try:
    f(False)
except UnboundLocalError as error:
    print(type(error).__name__, error.__traceback__.tb_next.tb_lineno)
"""


def test_a_name_subject_the_facts_read_first_is_not_read_before(
    tmp_path: Path,
) -> None:
    # The first fact reads the name on the match line: an unbound name's
    # error is the match line's, as natively.
    out = transpile(UNBOUND_SUBJECT)
    assert "\n    _spam_len1 = len(v) if" in out
    stdout = assert_runs_like_native(UNBOUND_SUBJECT, out, tmp_path, ("3.9", "3.8"))
    assert stdout.startswith(b"2\nUnboundLocalError 4\n")
