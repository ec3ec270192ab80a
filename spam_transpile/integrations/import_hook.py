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
import tempfile
from types import CodeType, ModuleType
from typing import Dict, Iterable, Optional, Sequence, Union

from spam_transpile import __version__
from spam_transpile.files.cache import Cache
from spam_transpile.errors import TranspileError
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
    return f"target={target}"


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
        cached = self._cached(data)
        if cached is not None:
            return cached
        source = decode_source(data, path)
        try:
            text = transpile(source.text, target=self.target, filename=path)
        except TranspileError as exc:
            _show_source_line(exc, source.text)
            # The lowering's own frames say nothing about the user's error.
            raise exc.with_traceback(None)
        if self.cache is not None:
            # The CLI's entry format: the lowered text in UTF-8, whatever
            # the source's encoding (compile() ignores the coding cookie of
            # a str, so the text is compiled as it is).
            self.cache.put(data, text.encode("utf-8"))
        return text

    def _cached(self, data: bytes) -> Optional[str]:
        if self.cache is None:
            return None
        hit = self.cache.get(data)
        try:
            return hit.decode("utf-8") if hit is not None else None
        except UnicodeDecodeError:
            return None  # a damaged entry: lower again

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
    """Finds modules like ``PathFinder`` and lowers those in scope."""

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
        self.target = target
        self.cache = cache
        self.bytecode = bytecode
        self._entry_verdicts: Dict[str, bool] = {}
        self._dir_verdicts: Dict[str, bool] = {}
        self._prefixes = tuple(
            {_real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
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
        if not by_package and not self._may_find_in_paths(path):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        # Only plain source files; extensions, bytecode-only and zip
        # imports keep their own loaders.
        if (
            spec is None
            or type(spec.loader) is not importlib.machinery.SourceFileLoader
        ):
            return None
        if spec.origin is None:
            return None
        if not by_package and not self._in_paths(spec.origin):
            return None
        loader = self.loader_for(fullname, spec.origin)
        spec.loader = loader
        spec.cached = loader.bytecode_path(spec.origin)
        return spec

    def invalidate_caches(self) -> None:
        self._entry_verdicts.clear()
        self._dir_verdicts.clear()

    def uninstall(self) -> None:
        """Stop lowering new imports (modules already imported stay as they are)."""
        while self in sys.meta_path:
            sys.meta_path.remove(self)

    def _may_find_in_paths(self, search: Optional[Sequence[str]]) -> bool:
        """Cheap pre-check: could a module found on ``search`` lie in a chosen directory?"""
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

    def _in_paths(self, origin: str) -> bool:
        directory = os.path.dirname(origin)
        verdict = self._dir_verdicts.get(directory)
        if verdict is None:
            real = _real(directory)
            verdict = any(
                _within(real, p) and not self._foreign(real, p) for p in self.paths
            )
            self._dir_verdicts[directory] = verdict
        return verdict

    def _foreign(self, directory: str, chosen: str) -> bool:
        relative = os.path.relpath(directory, chosen)
        if _FOREIGN_DIR_NAMES.intersection(relative.split(os.sep)):
            return True
        return any(
            prefix != chosen and _within(prefix, chosen) and _within(directory, prefix)
            for prefix in self._prefixes
        )


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
    lowered wherever they are found. ``target``: the oldest Python the
    lowered code must run on. ``cache``: False turns off both caches; a
    :class:`Cache` instance replaces the default one (whose folder
    ``$SPAM_TRANSPILE_CACHE_DIR`` sets).

    Returns the finder; ``finder.uninstall()`` removes it again.
    """
    parse_target(target, filename="install_import_hook(target=...)")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if isinstance(packages, str):
        packages = [packages]
    paths, packages = list(paths), list(packages)
    if not paths and not packages:
        raise ValueError("install_import_hook() needs paths=... or packages=...")
    if cache is True:
        store: Optional[Cache] = Cache(cache_options_key(target))
    else:
        store = cache or None
    finder = TranspilingFinder(
        paths, packages, target=target, cache=store, bytecode=cache is not False
    )
    sys.meta_path.insert(0, finder)
    return finder
