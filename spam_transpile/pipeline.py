"""The whole pipeline for one source text: parse -> validate -> lower -> emit.

``transpile`` is the pure core every entry point (CLI, hooks, build
integrations) calls; it never touches the file system.
"""

from __future__ import annotations

from typing import List, Tuple

import libcst as cst

from spam_transpile.errors import TranspileError, TranspileWarning
from spam_transpile.lowering.names import (
    Names,
    bound_names,
    identifiers_in,
    standard_ast,
)
from spam_transpile.parse import Unparsable, may_contain_match, parse_source
from spam_transpile.settings import parse_target
from spam_transpile.lowering.scopes import functions_in_order
from spam_transpile.lowering.facts import module_facts
from spam_transpile.lowering.transformer import MatchLowering
from spam_transpile.checks.verify import check_lines_kept, check_output_compiles


def transpile(source: str, *, target: str = "3.9", filename: str = "<unknown>") -> str:
    """Return ``source`` with every match statement lowered for ``target``.

    Raises :class:`TranspileError` for invalid source, for match statements
    CPython would reject, and for targets this version cannot serve.
    """
    return transpile_with_warnings(source, target=target, filename=filename)[0]


def transpile_with_warnings(
    source: str, *, target: str = "3.9", filename: str = "<unknown>"
) -> Tuple[str, List[TranspileWarning]]:
    """Like :func:`transpile`, also returning warnings (unreachable cases)."""
    warnings: List[TranspileWarning] = []
    version = parse_target(target, filename=filename)
    try:
        module = parse_source(source, filename)
    except Unparsable:
        return source, warnings
    if not may_contain_match(source):
        return source, warnings
    try:
        output = _lower_module(module, source, filename, version, warnings)
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
    if output is not source:
        check_lines_kept(source, output, filename)
        check_output_compiles(source, output, filename)
    return output, warnings


def _lower_module(
    module: cst.Module,
    source: str,
    filename: str,
    target: Tuple[int, int],
    warnings: List[TranspileWarning],
) -> str:
    tree = standard_ast(source)  # one standard parse serves both analyses
    names = Names(identifiers_in(source), bound_names(module, tree))
    transformer = MatchLowering(
        module,
        names,
        filename,
        source,
        target,
        functions_in_order(tree),
        module_facts(tree),
    )
    result = module.visit(transformer)
    if transformer.failed is not None:
        raise transformer.failed
    warnings.extend(transformer.warnings)
    if not transformer.match_count:
        return source
    return result.code
