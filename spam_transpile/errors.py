"""The one exception type users see, and its `path:line:col: error: message` form.

:class:`NotInstalled`, a kind of it, is about the environment, not the source."""

from __future__ import annotations


class TranspileError(SyntaxError):
    """A source the tool cannot (or must not) transpile.

    It is a ``SyntaxError`` so that callers who already handle CPython's own
    compile errors handle ours the same way; ``lineno`` is 1-based and
    ``offset`` is the 1-based column, as CPython reports them.
    """

    def __init__(
        self, msg: str, *, filename: str = "<unknown>", lineno: int = 1, offset: int = 1
    ) -> None:
        super().__init__(msg, (filename, lineno, offset, None))
        # SyntaxError.__init__ fills these from the tuple; restate for readers.
        self.msg = msg
        self.filename = filename
        self.lineno = lineno
        self.offset = offset

    def __reduce__(self):  # type: ignore[override]
        # Keyword-only __init__: rebuild through a helper so that errors can
        # cross process boundaries (parallel CLI workers).
        fields = (self.msg, self.filename, self.lineno, self.offset)
        return (_rebuild, (*fields, type(self)))

    def format(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.offset}: error: {self.msg}"

    def __str__(self) -> str:
        return self.format()


class NotInstalled(TranspileError):
    """Something the run needs is not installed (black, for the readable
    layout): nothing is wrong with the source, so it is never cached, and
    the same run succeeds once it is installed."""


def _rebuild(
    msg: str,
    filename: str,
    lineno: int,
    offset: int,
    kind: type = TranspileError,
) -> TranspileError:
    return kind(msg, filename=filename, lineno=lineno, offset=offset)


class TranspileWarning:
    """Something worth telling the user that does not stop transpiling."""

    def __init__(self, msg: str, *, filename: str, lineno: int, offset: int) -> None:
        self.msg = msg
        self.filename = filename
        self.lineno = lineno
        self.offset = offset

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_rebuild_warning, (self.msg, self.filename, self.lineno, self.offset))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TranspileWarning)
            and self.__reduce__() == other.__reduce__()
        )

    def __repr__(self) -> str:
        return f"TranspileWarning({self.format()!r})"

    def format(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.offset}: warning: {self.msg}"


def _rebuild_warning(
    msg: str, filename: str, lineno: int, offset: int
) -> TranspileWarning:
    return TranspileWarning(msg, filename=filename, lineno=lineno, offset=offset)
