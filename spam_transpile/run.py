"""Run a script or module, lowering match statements as modules are imported.

    python -m spam_transpile.run [OPTIONS] SCRIPT [ARGS...]
    python -m spam_transpile.run [OPTIONS] -m MODULE [ARGS...]

Works like ``python SCRIPT`` / ``python -m MODULE``: ``sys.argv``,
``__name__ == "__main__"`` and ``sys.path[0]`` (the script's folder, or the
current folder for ``-m``) are set the same way, and the script itself is
lowered too. Without ``--path``/``--package``, every module outside the
standard library and installed locations (site-packages, virtual
environments) is lowered, so folders on ``PYTHONPATH`` work as they are.
A traceback shows the program's frames only, as ``python SCRIPT`` would.

Options (before SCRIPT or -m):
  --target VERSION   oldest Python the lowered code must run on (default:
                     [tool.spam-transpile] target of the nearest pyproject.toml,
                     else the oldest its requires-python allows, else 3.9)
  --path DIR         lower only modules below DIR (repeatable)
  --package NAME     lower the top-level package NAME wherever found (repeatable)
  --no-cache         neither read nor write the caches
  -h, --help         show this text
"""

from __future__ import annotations

import builtins
import importlib.util
import os
import runpy
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Callable, List, NoReturn, Optional, Sequence, Tuple

from spam_transpile.errors import TranspileError
from spam_transpile.files.config import (
    ConfigError,
    find_pyproject,
    load_project,
    resolve_target,
)
from spam_transpile.integrations.import_hook import (
    TranspilingFinder,
    install_import_hook,
)
from spam_transpile.settings import parse_target

EXIT_USAGE = 2

USAGE = (
    "usage: python -m spam_transpile.run [--target VERSION] [--path DIR]... "
    "[--package NAME]... [--no-cache] (SCRIPT | -m MODULE) [ARGS...]"
)


@dataclass
class Invocation:
    #: None: from the project's configuration
    target: Optional[str] = None
    paths: List[str] = field(default_factory=list)
    packages: List[str] = field(default_factory=list)
    cache: bool = True
    script: Optional[str] = None
    module: Optional[str] = None
    args: List[str] = field(default_factory=list)


class UsageError(Exception):
    pass


_VALUED = {"--target": "target", "--path": "paths", "--package": "packages"}


def parse_args(argv: Sequence[str]) -> Invocation:
    """Options up to SCRIPT or ``-m MODULE``; everything after belongs to the program."""
    inv = Invocation()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if arg in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if arg == "--no-cache":
            inv.cache = False
        elif arg == "-m" or (arg.startswith("-m") and len(arg) > 2):
            name, i = _value(argv, i, "-m")
            inv.module, inv.args = name, list(argv[i + 1 :])
            return inv
        elif arg.split("=", 1)[0] in _VALUED:
            option = arg.split("=", 1)[0]
            value, i = _value(argv, i, option)
            _store(inv, _VALUED[option], value)
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option {arg!r}")
        else:
            break
        i += 1
    if i >= len(argv):
        raise UsageError("missing SCRIPT or -m MODULE")
    inv.script, inv.args = argv[i], list(argv[i + 1 :])
    return inv


def _value(argv: Sequence[str], i: int, option: str) -> Tuple[str, int]:
    arg = argv[i]
    if option == "-m" and arg != "-m":
        return arg[2:], i  # -mMODULE, as python accepts
    if arg.startswith(option + "="):
        return arg[len(option) + 1 :], i
    if i + 1 >= len(argv):
        raise UsageError(f"option {option} needs a value")
    return argv[i + 1], i + 1


def _store(inv: Invocation, attr: str, value: str) -> None:
    if attr == "target":
        inv.target = value
    else:
        getattr(inv, attr).append(value)


def _fail(message: str, status: int = 1) -> NoReturn:
    # Python's own wording and status for a script or module it cannot start.
    print(f"{sys.executable}: {message}", file=sys.stderr)
    sys.exit(status)


def _set_path0(entry: str) -> None:
    # python -I / -P put no script folder on sys.path; then neither do we.
    if sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        return
    if sys.path:
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)


def _hook(inv: Invocation, folder: str) -> TranspilingFinder:
    """The import hook, with the target configured for the project at ``folder``."""
    try:
        project = load_project(find_pyproject([folder]))
        target = resolve_target(project, explicit=inv.target).version
    except ConfigError as exc:
        print(exc.format(), file=sys.stderr)
        sys.exit(EXIT_USAGE)
    return install_import_hook(inv.paths, inv.packages, target=target, cache=inv.cache)


def _run_user_code(run: Callable[[], object], first_user_file: Optional[str]) -> None:
    """Run the program; an uncaught exception is shown without this tool's frames."""
    try:
        run()
    except SystemExit:
        raise
    except BaseException as exc:
        tb = _without_tool_frames(exc.__traceback__, first_user_file)
        # The default hook prints the exception's own __traceback__.
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        sys.exit(130 if isinstance(exc, KeyboardInterrupt) else 1)


_TOOL_FILES = (os.path.dirname(os.path.abspath(__file__)), runpy.__file__)


def _without_tool_frames(
    tb: Optional[types.TracebackType], first_user_file: Optional[str]
) -> Optional[types.TracebackType]:
    # `python SCRIPT` shows the script's frames only; drop the leading ones
    # of this package, runpy and importlib (frozen since 3.11).
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if first_user_file is not None and filename == first_user_file:
            break
        if not _is_tool_file(filename):
            break
        tb = tb.tb_next
    return tb


def _is_tool_file(filename: str) -> bool:
    return (
        filename.startswith(_TOOL_FILES)
        or filename.startswith("<frozen ")
        or "importlib/_bootstrap" in filename.replace(os.sep, "/")
    )


def run_script(inv: Invocation) -> None:
    script = inv.script or ""
    path = os.path.abspath(script)
    folder = path
    if os.path.isdir(path):
        # A folder with __main__.py runs like `python FOLDER`.
        path = os.path.join(path, "__main__.py")
    else:
        folder = os.path.dirname(os.path.realpath(path))
    _set_path0(folder)
    finder = _hook(inv, folder)
    # CPython never caches the main script's bytecode; neither do we.
    loader = finder.loader_for("__main__", path)
    loader.bytecode = False
    try:
        data = loader.get_data(path)
    except OSError as exc:
        _fail(f"can't open file {path!r}: [Errno {exc.errno}] {exc.strerror}", 2)
    try:
        code = loader.source_to_code(data, path)
    except SyntaxError as exc:
        # Like python with a broken script: the error, no frames of ours.
        traceback.print_exception(type(exc), exc, None)
        sys.exit(1)
    sys.argv = [script, *inv.args]
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __cached__=None,
        __loader__=loader,
        __spec__=None,
        __package__=None,
        __builtins__=builtins,
    )
    sys.modules["__main__"] = main
    _run_user_code(lambda: exec(code, main.__dict__), path)


def run_module(inv: Invocation) -> None:
    name = inv.module or ""
    cwd = os.getcwd()
    _set_path0(cwd)
    _hook(inv, cwd)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        _fail(
            f"Error while finding module specification for {name!r} "
            f"({type(exc).__name__}: {exc})"
        )
    if spec is None:
        _fail(f"No module named {name}")
    # runpy sets sys.argv[0] to the module's file, as `python -m` does.
    sys.argv = ["-m", *inv.args]
    _run_user_code(
        lambda: runpy.run_module(name, run_name="__main__", alter_sys=True), None
    )


def main(argv: Optional[Sequence[str]] = None) -> None:
    try:
        inv = parse_args(sys.argv[1:] if argv is None else argv)
        if inv.target is not None:
            parse_target(inv.target, filename="--target")
    except UsageError as exc:
        _usage_error(str(exc))
    except TranspileError as exc:
        _usage_error(exc.msg)
    if inv.module is not None:
        run_module(inv)
    else:
        run_script(inv)


def _usage_error(message: str) -> NoReturn:
    print(f"{USAGE}\nerror: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
