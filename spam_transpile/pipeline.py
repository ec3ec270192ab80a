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
    if not _has_match(module):
        return source
    names = Names(identifiers_in(source), bound_names(module))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    transformer = MatchLowering(wrapper.module, names, filename)
    result = wrapper.visit(transformer)
    output = result.code
    _check_lines_kept(source, output, filename)
    return output


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
