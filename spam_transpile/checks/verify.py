"""Safety net before output leaves the tool (black's "safe mode" idea).

Every emitter path is built to produce valid code that keeps line numbers;
these checks turn a bug of ours into a clear error instead of shipping a
broken or shifted file.
"""

from __future__ import annotations

import warnings

from spam_transpile.errors import TranspileError


def check_lines_kept(source: str, output: str, filename: str) -> None:
    if source.count("\n") != output.count("\n"):
        raise TranspileError(
            "internal error: the output would not keep line numbers "
            f"({source.count(chr(10))} lines in, {output.count(chr(10))} out); "
            "please report this",
            filename=filename,
        )


def check_output_compiles(source: str, output: str, filename: str) -> None:
    """The output must compile wherever its input does (on this interpreter)."""
    error = _compile_error(output, filename)
    if error is None or _compile_error(source, filename) is not None:
        # Either fine, or the input itself uses syntax this interpreter lacks
        # (running on 3.9, say): nothing to compare against.
        return
    raise TranspileError(
        f"internal error: the output does not compile ({error.msg}); please report this",
        filename=filename,
        lineno=error.lineno or 1,
        offset=error.offset or 1,
    )


def _compile_error(text: str, filename: str) -> "SyntaxError | None":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, filename, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return exc
        except (ValueError, MemoryError, RecursionError):
            return None
    return None
