"""Import hook: run a source tree that uses ``match`` on CPython 3.9 and 3.8 as it is.

:func:`install_import_hook` puts a finder first on ``sys.meta_path``. For
modules of the chosen directories (``paths``) or top-level packages
(``packages``) it hands out a loader that lowers the source before
compiling it; every other import is left to the normal machinery.

Code is compiled with the original file name and the lowering keeps every
line number, so tracebacks, ``inspect`` and debuggers show the user's files
and lines. A module that cannot be lowered raises
:class:`~spam_transpile.TranspileError` (a ``SyntaxError``) naming file, line
and column.

Two caches keep the second import as fast as a normal one:

- a bytecode file next to CPython's own, in ``__pycache__``, under a name
  the interpreter never loads by itself
  (``mod.cpython-39.opt-spam010t39.pyc``: tool version and target in the
  tag), validated by the source's mtime and size like CPython's;
- the shared content-addressed :class:`~spam_transpile.files.cache.Cache` of
  lowered sources (also used by the CLI), for when the bytecode file is
  missing or stale but the source did not change.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import sysconfig
import tempfile
from types import CodeType, ModuleType
from typing import Dict, Iterable, Optional, Sequence, Union

from spam_transpile import __version__
from spam_transpile.files.cache import Cache, options_key
from spam_transpile.errors import NotInstalled, TranspileError
from spam_transpile.integrations import may_hold_match
from spam_transpile.pipeline import transpile
from spam_transpile.settings import parse_target
from spam_transpile.files.write import decode_source

__all__ = [
    "TranspilingFinder",
    "TranspilingLoader",
    "cache_options_key",
    "install_import_hook",
]

PathLike = Union[str, "os.PathLike[str]"]

# Installed third-party code below a chosen directory (a project-local venv)
# is not the user's source: leave it to the normal import system.
_FOREIGN_DIR_NAMES = frozenset({"site-packages", "dist-packages"})

_PYC_HEADER_SIZE = 16


def cache_options_key(target: str) -> str:
    """The :class:`Cache` key part for these options, as the CLI spells it."""
    return options_key(target)


def _bytecode_tag(target: str) -> str:
    # cache_from_source() only accepts alphanumeric optimization tags.
    version = "".join(ch for ch in __version__ if ch.isalnum())
    tag = f"spam{version}t{target.replace('.', '')}"
    if sys.flags.optimize:
        tag += f"o{sys.flags.optimize}"
    return tag


class TranspilingLoader(importlib.machinery.SourceFileLoader):
    """A ``SourceFileLoader`` that lowers match statements before compiling."""

    def __init__(
        self,
        fullname: str,
        path: str,
        *,
        target: str = "3.9",
        cache: Optional[Cache] = None,
        bytecode: bool = True,
    ) -> None:
        super().__init__(fullname, path)
        self.target = target
        self.cache = cache
        self.bytecode = bytecode

    def bytecode_path(self, source_path: str) -> Optional[str]:
        if not self.bytecode:
            return None
        try:
            return importlib.util.cache_from_source(
                source_path, optimization=_bytecode_tag(self.target)
            )
        except NotImplementedError:  # sys.implementation.cache_tag is None
            return None

    def get_code(self, fullname: str) -> CodeType:
        source_path = self.get_filename(fullname)
        pyc = self.bytecode_path(source_path)
        stats = self._stats(source_path) if pyc is not None else None
        if pyc is not None and stats is not None:
            code = _read_pyc(pyc, stats)
            if code is not None:
                return code
        code = self.source_to_code(self.get_data(source_path), source_path)
        if pyc is not None and stats is not None and not sys.dont_write_bytecode:
            _write_pyc(pyc, stats, code, source_path)
        return code

    def source_to_code(  # type: ignore[override]
        self, data: bytes, path: str, *, _optimize: int = -1
    ) -> CodeType:
        # The original path as file name: tracebacks point at the user's file.
        return compile(
            self.lowered_source(data, path),
            path,
            "exec",
            dont_inherit=True,
            optimize=_optimize,
        )

    def lowered_source(self, data: bytes, path: str) -> Union[bytes, str]:
        """``data`` with its match statements lowered (bytes when unchanged)."""
        # A source without a match statement is compiled as it is, without
        # being parsed twice.
        if not may_hold_match(data):
            return data
        entry = self.cache.lookup(data) if self.cache is not None else None
        if entry is not None and entry.output is not None:
            return entry.output
        source = decode_source(data, path)
        if entry is not None and entry.error is not None:
            # The CLI (or an earlier import) found this error: same report.
            message, line, column = entry.error
            error = TranspileError(message, filename=path, lineno=line, offset=column)
            _show_source_line(error, source.text)
            raise error
        try:
            text = transpile(source.text, target=self.target, filename=path)
        except TranspileError as exc:
            _show_source_line(exc, source.text)
            if self.cache is not None and not isinstance(exc, NotInstalled):
                # An error about the source: the next import gets it at once.
                self.cache.put_error(data, exc.msg, exc.lineno or 1, exc.offset or 1)
            # The lowering's own frames say nothing about the user's error.
            raise exc.with_traceback(None)
        if self.cache is not None:
            # The lowered text in UTF-8, whatever the source's encoding
            # (compile() ignores the coding cookie of a str).
            self.cache.put_output(data, text)
        return text

    def _stats(self, source_path: str) -> Optional[Dict[str, float]]:
        try:
            return self.path_stats(source_path)  # type: ignore[return-value]
        except OSError:
            return None


def _show_source_line(exc: TranspileError, text: str) -> None:
    # With the line set, tracebacks print it with a caret under the column,
    # as they do for CPython's own syntax errors.
    if exc.text is None and exc.lineno and exc.lineno >= 1:
        lines = text.splitlines()
        if exc.lineno <= len(lines):
            exc.text = lines[exc.lineno - 1] + "\n"


def _pyc_header(stats: Dict[str, float]) -> bytes:
    # CPython's timestamp-based layout: magic, flags (0), mtime, size.
    return b"".join(
        (
            importlib.util.MAGIC_NUMBER,
            (0).to_bytes(4, "little"),
            (int(stats["mtime"]) & 0xFFFFFFFF).to_bytes(4, "little"),
            (int(stats["size"]) & 0xFFFFFFFF).to_bytes(4, "little"),
        )
    )


def _read_pyc(path: str, stats: Dict[str, float]) -> Optional[CodeType]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if data[:_PYC_HEADER_SIZE] != _pyc_header(stats):
        return None
    try:
        code = marshal.loads(data[_PYC_HEADER_SIZE:])
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _write_pyc(
    path: str, stats: Dict[str, float], code: CodeType, source_path: str
) -> None:
    data = _pyc_header(stats) + marshal.dumps(code)
    tmp = None
    try:
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        # Same permission rule as CPython's own bytecode files.
        mode = (os.stat(source_path).st_mode | 0o200) & 0o666
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".spam-", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError:
        # A read-only tree is slower to import, not broken.
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _real(path: PathLike) -> str:
    return os.path.realpath(os.fspath(path) or os.curdir)


def _within(child: str, parent: str) -> bool:
    if child == parent:
        return True
    prefix = parent if parent.endswith(os.sep) else parent + os.sep
    return child.startswith(prefix)


class TranspilingFinder(importlib.abc.MetaPathFinder):
    """Finds modules like ``PathFinder`` and lowers those in scope.

    In scope: modules below ``paths`` and top-level ``packages``; with
    neither (``everywhere``), every module outside the standard library and
    installed locations (site-packages, virtual environments), so folders
    on ``PYTHONPATH`` are lowered too.
    """

    def __init__(
        self,
        paths: Sequence[PathLike] = (),
        packages: Iterable[str] = (),
        *,
        target: str = "3.9",
        cache: Optional[Cache] = None,
        bytecode: bool = True,
    ) -> None:
        self.paths = tuple(_real(p) for p in paths)
        self.packages = frozenset(packages)
        self.everywhere = not self.paths and not self.packages
        self.target = target
        self.cache = cache
        self.bytecode = bytecode
        self._entry_verdicts: Dict[str, bool] = {}
        self._dir_verdicts: Dict[str, bool] = {}
        self._prefixes = tuple(
            {_real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        )
        self._stdlib = tuple(
            {_real(sysconfig.get_path(name)) for name in ("stdlib", "platstdlib")}
        )

    def loader_for(self, fullname: str, path: str) -> TranspilingLoader:
        return TranspilingLoader(
            fullname,
            path,
            target=self.target,
            cache=self.cache,
            bytecode=self.bytecode,
        )

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        by_package = fullname.partition(".")[0] in self.packages
        if not (by_package or _EXPLAIN_SKIPPED) and not self._may_find_in_paths(path):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        # Only plain source files; extensions, bytecode-only and zip
        # imports keep their own loaders.
        if (
            spec is None
            or type(spec.loader) is not importlib.machinery.SourceFileLoader
            or spec.origin is None
        ):
            return None
        if by_package or self._in_scope(spec.origin):
            loader = self.loader_for(fullname, spec.origin)
            spec.loader = loader
            spec.cached = loader.bytecode_path(spec.origin)
            return spec
        hint = self._skipped_hint(fullname, spec.origin) if _EXPLAIN_SKIPPED else None
        if hint is None:
            return None
        spec.loader = _ExplainingLoader(fullname, spec.origin, hint)
        return spec

    def invalidate_caches(self) -> None:
        self._entry_verdicts.clear()
        self._dir_verdicts.clear()

    def uninstall(self) -> None:
        """Stop lowering new imports (modules already imported stay as they are)."""
        while self in sys.meta_path:
            sys.meta_path.remove(self)

    def _may_find_in_paths(self, search: Optional[Sequence[str]]) -> bool:
        """Cheap pre-check: could a module found on ``search`` be in scope?"""
        if self.everywhere:
            return True
        if not self.paths:
            return False
        entries = sys.path if search is None else search
        return any(self._entry_related(entry) for entry in entries)

    def _entry_related(self, entry: str) -> bool:
        if not isinstance(entry, str):
            return False
        verdict = self._entry_verdicts.get(entry)
        if verdict is None:
            real = _real(entry)
            verdict = any(_within(real, p) or _within(p, real) for p in self.paths)
            # "" means the current directory, which may change.
            if entry:
                self._entry_verdicts[entry] = verdict
        return verdict

    def _in_scope(self, origin: str) -> bool:
        directory = os.path.dirname(origin)
        verdict = self._dir_verdicts.get(directory)
        if verdict is None:
            real = _real(directory)
            if self.everywhere:
                verdict = not self._installed(real)
            else:
                verdict = any(
                    _within(real, p) and not self._foreign(real, p) for p in self.paths
                )
            self._dir_verdicts[directory] = verdict
        return verdict

    def _installed(self, directory: str) -> bool:
        """In the standard library, site-packages or an interpreter's prefix."""
        if _FOREIGN_DIR_NAMES.intersection(directory.split(os.sep)):
            return True
        return any(_within(directory, p) for p in self._prefixes + self._stdlib)

    def _foreign(self, directory: str, chosen: str) -> bool:
        relative = os.path.relpath(directory, chosen)
        if _FOREIGN_DIR_NAMES.intersection(relative.split(os.sep)):
            return True
        return any(
            prefix != chosen and _within(prefix, chosen) and _within(directory, prefix)
            for prefix in self._prefixes
        )

    def _skipped_hint(self, fullname: str, origin: str) -> Optional[str]:
        """Why a module was not lowered and how to include it (None: stdlib)."""
        real = _real(os.path.dirname(origin))
        top = fullname.partition(".")[0]
        if any(_within(real, p) for p in self._stdlib) and not (
            _FOREIGN_DIR_NAMES.intersection(real.split(os.sep))
        ):
            return None  # the standard library has no match statement to lower
        if self._installed(real):
            where = "it is installed (site-packages or a virtual environment)"
        else:
            where = "it is outside the --path folders"
        return (
            f"spam_transpile did not lower {origin}: {where}; "
            f"--package {top} (install_import_hook(packages=[{top!r}])) lowers it"
        )


# Before 3.10 a skipped module with a match statement fails to compile; its
# SyntaxError then says why it was skipped. 3.10+ compiles it natively.
_EXPLAIN_SKIPPED = sys.version_info < (3, 10)


class _ExplainingLoader(importlib.machinery.SourceFileLoader):
    """The normal loader, whose syntax error at a ``match`` names the hook's option."""

    def __init__(self, fullname: str, path: str, hint: str) -> None:
        super().__init__(fullname, path)
        self.hint = hint

    def source_to_code(  # type: ignore[override]
        self, data: bytes, path: str, *, _optimize: int = -1
    ) -> CodeType:
        try:
            return super().source_to_code(data, path, _optimize=_optimize)
        except SyntaxError as exc:
            if not may_hold_match((exc.text or "").encode("utf-8", "replace")):
                raise
            explained = SyntaxError(
                f"{exc.msg} ({self.hint})",
                (exc.filename, exc.lineno, exc.offset, exc.text),
            )
            raise explained.with_traceback(None) from None


def install_import_hook(
    paths: Union[PathLike, Sequence[PathLike]] = (),
    packages: Union[str, Iterable[str]] = (),
    *,
    target: str = "3.9",
    cache: Union[bool, Cache] = True,
) -> TranspilingFinder:
    """Lower match statements of modules imported from now on.

    ``paths``: directories whose modules (at any depth) are lowered;
    third-party code installed below them (``site-packages``, a project-local
    virtualenv) is not. ``packages``: top-level package or module names
    lowered wherever they are found. With neither, every module outside the
    standard library and installed locations is lowered (folders on
    ``sys.path`` and ``PYTHONPATH`` included). ``target``: the oldest Python
    the lowered code must run on. ``cache``: False turns off both caches; a
    :class:`Cache` instance replaces the default one (whose folder
    ``$SPAM_TRANSPILE_CACHE_DIR`` sets).

    Returns the finder; ``finder.uninstall()`` removes it again.
    """
    parse_target(target, filename="install_import_hook(target=...)")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if isinstance(packages, str):
        packages = [packages]
    if cache is True:
        store: Optional[Cache] = Cache(cache_options_key(target))
    else:
        store = cache or None
    finder = TranspilingFinder(
        list(paths),
        list(packages),
        target=target,
        cache=store,
        bytecode=cache is not False,
    )
    sys.meta_path.insert(0, finder)
    return finder
