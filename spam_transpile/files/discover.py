"""Which files a run touches, and where each one's output goes.

Paths given on the command line are expanded into :class:`Task` objects:
a directory is walked (include/exclude globs, default exclusions for VCS
folders, virtual environments and build output, symbolic links followed
with loop detection); a file is taken as it is. With ``-o OUT`` each task
also gets its destination, so that a directory is mirrored into OUT.

Globs follow ``.gitignore`` rules (pathspec, as black uses): a pattern
without ``/`` matches a file or folder name at any depth (``__pycache__``,
``*.egg-info``); a pattern with ``/`` matches the path relative to the
project root (``src/generated/**``); ``**`` spans folders, a trailing ``/``
means a folder and ``!`` re-includes. The ``.gitignore`` files of the
project root and the folders below it exclude more in walked folders.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import (
    Dict,
    FrozenSet,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

import pathspec

from spam_transpile.files.write import TEMP_SUFFIX, is_temporary_name

STDIN = "-"

DEFAULT_INCLUDE: Tuple[str, ...] = ("*.py",)
DEFAULT_EXCLUDE: Tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".direnv",
    ".eggs",
    "*.egg-info",
    "__pycache__",
    "__pypackages__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
    "_build",
    "build",
    "buck-out",
    "dist",
    "node_modules",
)
# Any folder holding this file is a virtual environment, whatever its name.
VENV_MARKER = "pyvenv.cfg"


class Task:
    """One file to handle: transpile it (``python``) or copy it verbatim.

    The paths are kept as the strings the walk builds (``name``,
    ``output``); ``source`` and ``destination`` make Path objects on
    demand. A rerun served by the stat cache needs only the strings, and
    two Path objects per file are a good share of such a run on a big tree.
    """

    __slots__ = ("name", "output", "python", "info", "absolute")

    def __init__(
        self,
        source: "Union[str, os.PathLike[str]]",
        destination: "Union[str, os.PathLike[str], None]",
        python: bool,
        info: Optional[os.stat_result] = None,
        absolute: str = "",
    ) -> None:
        #: the source as given or found (what messages show)
        self.name = os.fspath(source)
        #: where its output goes, with -o
        self.output = None if destination is None else os.fspath(destination)
        self.python = python
        #: the source's stat (links followed) taken by the walk, so the
        #: stat cache can tell an unchanged file without another system call
        self.info = info
        #: ``os.path.abspath(source)``: the stat cache's key
        self.absolute = absolute or os.path.abspath(self.name)

    @property
    def source(self) -> Path:
        return Path(self.name)

    @property
    def destination(self) -> Optional[Path]:
        return None if self.output is None else Path(self.output)

    def __repr__(self) -> str:
        return f"Task({self.name!r}, {self.output!r}, python={self.python})"


class Problem(NamedTuple):
    """A path that cannot be handled, with the reason (reported as an error)."""

    path: str
    message: str

    def format(self) -> str:
        return f"{self.path}:1:1: error: {self.message}"


class UsageProblem(Exception):
    """The paths and -o together make no sense (output inside the input, ...)."""


class _GitIgnores:
    """The ``.gitignore`` files of the project root and the folders below it.

    Each is read once, the first time a path below its folder is asked
    about, and its patterns apply relative to its own folder, as git applies
    them (a deeper file's ``!pattern`` does not undo a shallower one's).
    """

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._specs: Dict[str, Optional[pathspec.GitIgnoreSpec]] = {}

    def ignore(self, relative: str) -> bool:
        suffix = "/" if relative.endswith("/") else ""
        parts = relative.rstrip("/").split("/")
        for depth in range(len(parts)):
            spec = self._spec("/".join(parts[:depth]))
            if spec is not None and spec.match_file("/".join(parts[depth:]) + suffix):
                return True
        return False

    def _spec(self, folder: str) -> Optional[pathspec.GitIgnoreSpec]:
        if folder not in self._specs:
            path = os.path.join(self.root, folder, ".gitignore")
            # A stat first: a tree without .gitignore files opens none.
            if not os.path.isfile(path):
                self._specs[folder] = None
                return None
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    lines = handle.read().splitlines()
            except OSError:  # none here (or unreadable: nothing to respect)
                self._specs[folder] = None
            else:
                self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines)
        return self._specs[folder]


class _GlobSet:
    """Globs with ``.gitignore`` semantics (pathspec), asked about relative paths.

    The exclusions and the project's ``.gitignore`` files stay separate
    specs, so a ``!pattern`` in one cannot undo another. A folder is asked
    about as ``path/``, so ``docs/_build/`` matches it.
    """

    def __init__(
        self, patterns: Sequence[str], ignores: Optional[_GitIgnores] = None
    ) -> None:
        self.specs = []
        if any(p.strip() for p in patterns):
            self.specs.append(pathspec.GitIgnoreSpec.from_lines(patterns))
        self.ignores = ignores

    def matches(self, relative: str, name: Optional[str] = None) -> bool:
        """Whether a glob matches ``relative`` (``name`` is kept for callers)."""
        if any(spec.match_file(relative) for spec in self.specs):
            return True
        return self.ignores is not None and self.ignores.ignore(relative)


class Filters:
    """Include/exclude globs, relative to ``root`` (the project root)."""

    # A plain class, as are Task and Plan: dataclasses are slow to create at
    # import, which a rerun served by the stat cache mostly is.

    def __init__(
        self,
        root: Path,
        include: Tuple[str, ...] = DEFAULT_INCLUDE,
        exclude: Tuple[str, ...] = DEFAULT_EXCLUDE,
        extend_exclude: Tuple[str, ...] = (),
        force_exclude: Tuple[str, ...] = (),
        gitignore: bool = False,
    ) -> None:
        self.root = root
        self.include = include
        self.exclude = exclude
        self.extend_exclude = extend_exclude
        self.force_exclude = force_exclude
        #: the .gitignore files of the root and below (walked folders only)
        self.gitignores = _GitIgnores(root) if gitignore else None
        self._compiled: Dict[Tuple[str, ...], _GlobSet] = {}

    def _globs(self, *kinds: str) -> _GlobSet:
        if kinds not in self._compiled:
            own = [
                p for kind in kinds if kind != "gitignore" for p in getattr(self, kind)
            ]
            ignores = self.gitignores if "gitignore" in kinds else None
            self._compiled[kinds] = _GlobSet(own, ignores)
        return self._compiled[kinds]

    def relative(self, path: Path) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return Path(os.path.abspath(path)).as_posix().lstrip("/")

    # The checks take the path relative to the root as a "/" string, which
    # the walk builds as it goes: cheaper than pathlib for every entry.

    def exclusions(self) -> _GlobSet:
        return self._globs("exclude", "extend_exclude", "force_exclude", "gitignore")

    def inclusions(self) -> _GlobSet:
        return self._globs("include")

    def excluded(self, relative: str) -> bool:
        return self.exclusions().matches(relative)

    def force_excluded(self, relative: str) -> bool:
        # gitignore rules: --force-exclude build also skips build/x.py
        # named on the command line.
        return self._globs("force_exclude").matches(relative)

    def included(self, relative: str) -> bool:
        return self.inclusions().matches(relative)


# --------------------------------------------------------------------------
# Walking
# --------------------------------------------------------------------------


#: what the walk yields: (file, absolute path, included as Python, problem,
#: its stat)
Found = Tuple[str, str, bool, Optional[str], Optional[os.stat_result]]


def walk(directory: Path, filters: Filters) -> Iterator[Found]:
    """Yield (file, absolute, Python?, problem, stat) for every file under ``directory``.

    Excluded folders are not entered and excluded files not yielded.
    Symbolic links are followed (the stat is the target's); a link back to
    a folder being walked is a loop and is reported instead of followed
    forever. Paths are strings, joined as ``directory / name`` would be.
    """
    name = str(directory)
    try:
        info = os.stat(name)
    except OSError as exc:
        yield name, os.path.abspath(name), False, _os_problem(exc), None
        return
    identity = frozenset({(info.st_dev, info.st_ino)})
    top = _Folder(name, os.path.abspath(name), filters.relative(directory))
    # Collected into a list: passing every file up through one nested
    # generator per folder level costs more than the walk's own work.
    found: List[Found] = []
    _walk(top, filters, identity, found)
    yield from found


class _Folder(NamedTuple):
    """A folder being walked: as shown, absolute, and relative to the root."""

    name: str
    absolute: str
    relative: str

    def child(self, entry: str) -> "_Folder":
        relative = f"{self.relative}/{entry}" if self.relative else entry
        return _Folder(_join(self.name, entry), _join(self.absolute, entry), relative)


def _join(folder: str, name: str) -> str:
    # As pathlib joins: Path(".") / "a" is "a", not "./a".
    return name if folder == "." else os.path.join(folder, name)


def _walk(
    folder: _Folder,
    filters: Filters,
    ancestors: FrozenSet[Tuple[int, int]],
    found: List[Found],
) -> None:
    try:
        with os.scandir(folder.name) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        problem = "cannot read directory: " + (exc.strerror or str(exc))
        found.append((folder.name, folder.absolute, False, problem, None))
        return
    # Per entry only string concatenation: this loop sees every file.
    shown = "" if folder.name == "." else os.path.join(folder.name, "")
    absolute = os.path.join(folder.absolute, "")
    relative = f"{folder.relative}/" if folder.relative else ""
    exclude, include = filters.exclusions(), filters.inclusions()
    for entry in entries:
        name = entry.name
        child = relative + name
        if exclude.matches(child + "/" if _is_dir(entry) else child, name):
            continue
        try:
            info = os.stat(entry.path)  # follows symbolic links
        except OSError as exc:
            problem = _os_problem(exc, link=entry.is_symlink())
            found.append((shown + name, absolute + name, False, problem, None))
            continue
        if stat.S_ISDIR(info.st_mode):
            _walk_folder(folder.child(name), info, filters, ancestors, found)
        elif stat.S_ISREG(info.st_mode):
            python = include.matches(child, name)
            found.append((shown + name, absolute + name, python, None, info))
        elif include.matches(child, name):
            problem = "not a regular file (a device, socket or pipe)"
            found.append((shown + name, absolute + name, True, problem, None))


def _is_dir(entry: "os.DirEntry[str]") -> bool:
    # Folder-only globs ("docs/_build/") need to know; a broken link or a
    # loop is no folder, and is reported when it is stat'ed below.
    try:
        return entry.is_dir()
    except OSError:
        return False


def _walk_folder(
    folder: _Folder,
    info: os.stat_result,
    filters: Filters,
    ancestors: FrozenSet[Tuple[int, int]],
    found: List[Found],
) -> None:
    identity = (info.st_dev, info.st_ino)
    path = folder.name
    if identity in ancestors:
        target = os.readlink(path) if os.path.islink(path) else path
        loop = f"symbolic link loop: {path} -> {target} leads back to a folder above it"
        found.append((path, folder.absolute, False, loop, None))
        return
    if os.path.isfile(os.path.join(path, VENV_MARKER)):
        return  # a virtual environment under another name
    _walk(folder, filters, ancestors | {identity}, found)


def _os_problem(exc: OSError, *, link: bool = False) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    if link and exc.errno == errno.ENOENT:
        return "broken symbolic link (its target does not exist)"
    return "cannot read: " + (exc.strerror or str(exc))


# --------------------------------------------------------------------------
# Planning: inputs -> tasks, with destinations
# --------------------------------------------------------------------------


class Plan:
    def __init__(
        self, *, stdin: bool = False, stdin_destination: Optional[Path] = None
    ) -> None:
        self.tasks: List[Task] = []
        self.problems: List[Problem] = []
        self.stdin = stdin
        #: where standard input's result goes (None: standard output)
        self.stdin_destination = stdin_destination
        #: temporary files of ours found in walked folders, left by an
        #: interrupted run (or being written by a running one)
        self.leftovers: List[str] = []


def make_plan(
    paths: Sequence[str],
    output: Optional[Path],
    filters: Filters,
    *,
    mirror_others: bool,
) -> Plan:
    """Expand ``paths`` into tasks; ``mirror_others`` also copies non-Python files.

    Raises UsageProblem when the paths and ``output`` cannot work together.
    """
    if STDIN in paths:
        if len(paths) > 1:
            raise UsageProblem(
                "'-' (standard input) cannot be combined with other paths"
            )
        return Plan(stdin=True, stdin_destination=output)
    plan = Plan()
    mapping = _destination_mapper(paths, output, filters)
    seen: Set[str] = set()
    for raw in paths:
        _expand(Path(raw), filters, mapping, mirror_others, plan, seen)
    return plan


def _expand(
    path: Path,
    filters: Filters,
    mapping: "_Mapper",
    mirror_others: bool,
    plan: Plan,
    seen: Set[str],
) -> None:
    if filters.force_excluded(filters.relative(path)):
        return
    if path.is_dir():
        for file, absolute, python, problem, info in walk(path, filters):
            if problem is not None:
                plan.problems.append(Problem(file, problem))
            elif file.endswith(TEMP_SUFFIX) and is_temporary_name(
                os.path.basename(file)
            ):
                # Half an output, never an input: not copied nor transpiled.
                plan.leftovers.append(file)
            elif python or mirror_others:
                _add(plan, seen, mapping, file, absolute, python, info)
        return
    if path.exists() and not path.is_file():
        plan.problems.append(
            Problem(str(path), "not a regular file (a device, socket or pipe)")
        )
        return
    if not path.exists() and not path.is_symlink():
        plan.problems.append(
            Problem(str(path), "cannot read file: No such file or directory")
        )
        return
    # A file named on the command line is Python whatever its name (as black
    # does); a broken link or loop is reported when it is read.
    _add(plan, seen, mapping, str(path), os.path.abspath(path), True, None)


def _add(
    plan: Plan,
    seen: Set[str],
    mapping: "_Mapper",
    source: str,
    absolute: str,
    python: bool,
    info: Optional[os.stat_result],
) -> None:
    if absolute not in seen:  # the same file named twice, or reached twice
        seen.add(absolute)
        destination = mapping(absolute)
        plan.tasks.append(Task(source, destination, python, info, absolute))


class _Mapper:
    """Maps a source path to its destination under -o (or None without -o)."""

    def __init__(
        self, base: Optional[Path], output: Optional[Path], single_file: bool
    ) -> None:
        self.base = base
        self.output = output
        self.single_file = single_file
        # Destinations are joined as strings: one Path per file would be a
        # good share of a rerun served by the stat cache.
        self._prefix = "" if base is None else os.path.join(str(base), "")
        if output is None or str(output) == ".":
            self._output = ""  # as pathlib joins: Path(".") / "a" is "a"
        else:
            self._output = os.path.join(str(output), "")

    def __call__(self, absolute: str) -> Optional[str]:
        """Where the source whose absolute path is ``absolute`` goes."""
        if self.output is None:
            return None
        if self.single_file or self.base is None:
            return str(self.output)
        if absolute.startswith(self._prefix):  # always, by construction; cheap
            return self._output + absolute[len(self._prefix) :]
        return str(self.output / Path(absolute).relative_to(self.base))


def _destination_mapper(
    paths: Sequence[str], output: Optional[Path], filters: Filters
) -> _Mapper:
    if output is None:
        return _Mapper(None, None, False)
    sources = [Path(p) for p in paths]
    output_is_folder = output.is_dir() or str(output).endswith(("/", os.sep))
    if len(sources) == 1 and not sources[0].is_dir() and not output_is_folder:
        _refuse_same_file(sources[0], output)
        return _Mapper(None, output, True)
    if len(sources) == 1 and sources[0].is_dir():
        # One folder: OUT becomes its mirror (OUT/x.py for FOLDER/x.py).
        base = Path(os.path.abspath(sources[0]))
    else:
        # Several paths (or a file into a folder): each keeps its name and
        # its place relative to the folder that holds them all.
        anchors = [os.path.dirname(os.path.abspath(s)) for s in sources]
        base = Path(os.path.commonpath(anchors))
    if output.exists() and not output.is_dir():
        raise UsageProblem(
            f"-o {output} is a file; with several paths or a folder, -o names a folder"
        )
    _refuse_overlap(sources, base, output, filters)
    return _Mapper(base, output, False)


def _refuse_same_file(source: Path, output: Path) -> None:
    if output.exists() and _real(output) == _real(source):
        raise UsageProblem(
            f"-o {output} is the input file itself; use --in-place to rewrite it"
        )


def _refuse_overlap(
    sources: Sequence[Path], base: Path, output: Path, filters: Filters
) -> None:
    real_output = _real(output)
    if real_output == _real(base):
        raise UsageProblem(
            f"-o {output} is the input folder itself; every output would overwrite "
            "its source (use --in-place to rewrite files where they are)"
        )
    for source in sources:
        real_source = _real(source)
        # OUT in an excluded folder (`. -o build`) is never walked as input.
        walked = not _skipped_by_walk(real_output, real_source, filters)
        if source.is_dir() and _inside(real_output, real_source) and walked:
            raise UsageProblem(
                f"output directory {output} is inside the input {source} and "
                "would be walked as input; choose a folder outside it, or "
                f"exclude it (--extend-exclude {output.name}/)"
            )
        if not source.is_dir() and real_output == real_source:
            raise UsageProblem(f"-o {output} is the input file {source}")


def _skipped_by_walk(output: Path, source: Path, filters: Filters) -> bool:
    """Whether walking ``source`` leaves out ``output`` (an excluded folder on the way)."""
    if not _inside(output, source) or output == source:
        return False
    folder = source
    for part in output.relative_to(source).parts:
        folder = folder / part
        relative = filters.relative(folder)
        if filters.excluded(relative + "/") or (folder / VENV_MARKER).is_file():
            return True
    return False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
