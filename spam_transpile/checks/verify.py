"""Safety net before output leaves the tool (black's "safe mode" idea).

Every emitter path is built to produce valid code that keeps line numbers;
these checks turn a bug of ours into a clear error instead of shipping a
broken or shifted file.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Iterator, List, Optional, Sequence, Tuple

from spam_transpile.errors import TranspileError
from spam_transpile.settings import Target

_LINE_END = re.compile(r"\r\n|\r|\n")


def check_lines_kept(source: str, output: str, filename: str) -> None:
    # Lines end where CPython's tokenizer ends them: \n, \r\n or a lone \r.
    lines_in = len(_LINE_END.findall(source))
    lines_out = len(_LINE_END.findall(output))
    if lines_in != lines_out:
        raise TranspileError(
            "internal error: the output would not keep line numbers "
            f"({lines_in} lines in, {lines_out} out); please report this",
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


def check_output(
    source: str,
    output: str,
    nodes: Optional[Sequence[ast.AST]],
    target: Target,
    filename: str,
) -> None:
    """:func:`check_output_compiles`, then :func:`check_target_syntax`, with
    the output parsed once where both pass.

    The target's parser (``feature_version``) only refuses more than the
    running one, into the same tree, and compiling that tree is what
    compiling the text does after its parse: when both succeed, both checks
    pass on the text. Otherwise (or when compiling the tree object recurses
    too deep) the two checks run as they are, to report what they report.
    """
    if _compiles_for_target(output, filename, target):
        _check_newest_construct(nodes, target, filename)
        return
    check_output_compiles(source, output, filename)
    check_target_syntax(nodes, output, target, filename)


def _compiles_for_target(text: str, filename: str, target: Target) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(
                text, filename, feature_version=target.parser_feature_version
            )
            compile(tree, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return False
    return True


# --------------------------------------------------------------------------
# Syntax newer than the target outside match statements


def check_target_syntax(
    nodes: Optional[Sequence[ast.AST]],
    output: str,
    target: Target,
    filename: str,
) -> None:
    """Refuse a file the target's parser would refuse for the user's own code.

    ``nodes`` are those of the source's standard tree in ``ast.walk`` order
    (3.10+, else None): constructs the standard parser's ``feature_version``
    does not police are found there, at their own positions. ``output`` has
    no match statement left, so ``ast.parse(..., feature_version=target)``
    judges everything else in it (lines keep their numbers; on a rewritten
    line the column is the output's).
    """
    _check_newest_construct(nodes, target, filename)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(output, filename, feature_version=target.parser_feature_version)
        except SyntaxError as exc:
            raise TranspileError(
                f"{exc.msg} (target Python {target[0]}.{target[1]})",
                filename=filename,
                lineno=exc.lineno or 1,
                offset=exc.offset or 1,
            ) from None
        except (ValueError, MemoryError, RecursionError):
            pass


def _check_newest_construct(
    nodes: Optional[Sequence[ast.AST]], target: Target, filename: str
) -> None:
    if nodes is None:
        return
    newer = _newest_construct(nodes, target)
    if newer is not None:
        node, what, version = newer
        raise TranspileError(
            f"{what} need Python {version[0]}.{version[1]}",
            filename=filename,
            lineno=getattr(node, "lineno", 1),
            offset=getattr(node, "col_offset", 0) + 1,
        )


def _newest_construct(
    nodes: Sequence[ast.AST], target: Target
) -> Optional[Tuple[ast.AST, str, Tuple[int, int]]]:
    """The first construct (in tree order) the target cannot parse, and the
    node to point at."""
    for node in nodes:
        if type(node) not in _MAY_BE_NEWER:
            continue  # most nodes: no call per node
        for site, what, version in _constructs(node):
            if version > target:
                return site, what, version
    return None


_TRY_STAR = getattr(ast, "TryStar", None)
_TYPE_ALIAS = getattr(ast, "TypeAlias", None)
# The only node types _constructs() can find something in (type parameters
# hang on functions, classes and type aliases).
_MAY_BE_NEWER = frozenset(
    kind
    for kind in (
        _TRY_STAR,
        _TYPE_ALIAS,
        ast.Subscript,
        ast.arguments,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
    )
    if kind is not None
)


def _constructs(node: ast.AST) -> Iterator[Tuple[ast.AST, str, Tuple[int, int]]]:
    """Syntax newer than 3.10 that ``feature_version`` lets through (as of
    CPython 3.13): PEP 646 stars, except*, PEP 695. An interpreter older
    than a feature cannot parse it at all, so it never gets here."""
    if _TRY_STAR is not None and isinstance(node, _TRY_STAR):
        yield node.handlers[0], "exception groups (except*)", (3, 11)
    elif isinstance(node, ast.Subscript):
        for star in _stars(node.slice):
            yield star, "starred expressions in subscripts (PEP 646)", (3, 11)
    elif isinstance(node, ast.arguments) and node.vararg is not None:
        if isinstance(node.vararg.annotation, ast.Starred):
            annotation = node.vararg.annotation
            yield annotation, "starred annotations of *args (PEP 646)", (3, 11)
    elif _TYPE_ALIAS is not None and isinstance(node, _TYPE_ALIAS):
        yield node, "type statements (PEP 695)", (3, 12)
    elif getattr(node, "type_params", None):
        site = node.type_params[0]  # type: ignore[attr-defined]
        yield site, "type parameter lists (PEP 695)", (3, 12)


def _stars(index: ast.AST) -> List[ast.AST]:
    if isinstance(index, ast.Starred):
        return [index]
    if isinstance(index, ast.Tuple):
        return [element for element in index.elts if isinstance(element, ast.Starred)]
    return []
