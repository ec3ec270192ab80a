"""The whole pipeline for one source text: parse -> validate -> lower -> emit.

``transpile`` is the pure core every entry point (CLI, hooks, build
integrations) calls; it never touches the file system.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper

from spam_transpile.errors import TranspileError
from spam_transpile.names import Names, bound_names, identifiers_in
from spam_transpile.parse import parse_source
from spam_transpile.settings import parse_target
from spam_transpile.transformer import MatchLowering


def transpile(source: str, *, target: str = "3.9", filename: str = "<unknown>") -> str:
    """Return ``source`` with every match statement lowered for ``target``.

    Raises :class:`TranspileError` for invalid source, for match statements
    CPython would reject, and for targets this version cannot serve.
    """
    parse_target(target, filename=filename)
    module = parse_source(source, filename)
    try:
        output = _lower_module(module, source, filename)
    except TranspileError:
        raise
    except RecursionError:
        raise TranspileError(
            "too deeply nested to transpile", filename=filename
        ) from None
    except Exception as exc:  # a bug of ours; never a raw traceback for users
        raise TranspileError(
            f"internal error ({type(exc).__name__}: {exc}); please report this",
            filename=filename,
        ) from exc
    _check_lines_kept(source, output, filename)
    return output


def _lower_module(module: cst.Module, source: str, filename: str) -> str:
    if not _has_match(module):
        return source
    names = Names(identifiers_in(source), bound_names(module))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    transformer = MatchLowering(wrapper.module, names, filename)
    return wrapper.visit(transformer).code


class _FindMatch(cst.CSTVisitor):
    found = False

    def visit_Match(self, node: cst.Match) -> bool:
        self.found = True
        return False


def _has_match(module: cst.Module) -> bool:
    finder = _FindMatch()
    module.visit(finder)
    return finder.found


def _check_lines_kept(source: str, output: str, filename: str) -> None:
    # A safety net, not a feature: every emitter path is built to keep line
    # numbers, and shipping output that silently shifted them is worse than
    # refusing.
    if source.count("\n") != output.count("\n"):
        raise TranspileError(
            "internal error: the output would not keep line numbers "
            f"({source.count(chr(10))} lines in, {output.count(chr(10))} out); "
            "please report this",
            filename=filename,
        )
