"""Build integrations and the import hook, end to end.

- In-process (tool interpreter): file selection globs, the import hook
  (lowering, tracebacks, both caches, errors, scoping) and ``spam_transpile.run``
  argument handling.
- Builds: ``python -m build`` of fixtures/sample_project with hatchling (the
  ``spam-transpile`` build hook) and with setuptools (``build_py``), in
  isolated build environments that get spam_transpile as a wheel built from
  this checkout (through ``PIP_FIND_LINKS``); broken modules fail both builds
  with ``path:line:col: error: message`` and leave ``dist/`` empty.
- On CPython 3.9: each wheel installed in a fresh virtualenv runs the
  sample's own tests; the same tests run from the sources through
  ``python -m spam_transpile.run -m unittest``.

Virtualenvs, the spam_transpile wheel and the sample's wheels are built once
per session.
"""

from __future__ import annotations

import ast
import dis
import importlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import traceback
import types
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

import pytest

import spam_transpile.integrations.import_hook as import_hook
from spam_transpile import TranspileError, transpile
from spam_transpile.integrations.import_hook import (
    TranspilingFinder,
    TranspilingLoader,
    install_import_hook,
)
from spam_transpile.integrations import BuildError, FileSelector, lower_file_bytes
from spam_transpile.run import UsageError, parse_args
from tests.interpreters import require_interpreter

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "fixtures" / "sample_project"
SETUPTOOLS_OVERLAY = ROOT / "fixtures" / "sample_project_setuptools"
PACKAGE = "sample_shapes"
SAMPLE_MODULES = [
    "__init__.py",
    "commands.py",
    "config.py",
    "geometry.py",
    "formats/__init__.py",
    "formats/records.py",
]
# Has match statements but is excluded from lowering (3.10+ only).
NATIVE_MODULE = "_native.py"
SAMPLE_TEST_COUNT = 14

BROKEN_SOURCE = "value = 1\nmatch value:\n    case 1 | other:\n        pass\n"
ENTRY_POINT_HINT = (
    "pyproject.toml needs [project.entry-points.hatch] spam-transpile = "
    '"spam_transpile.integrations.hatch_build"'
)

SUBPROCESS_TIMEOUT = 600


# -- helpers -----------------------------------------------------------------


def _run(
    args: Sequence[str],
    *,
    cwd: Optional[Path] = None,
    env: Optional[Dict[str, str]] = None,
    check: bool = True,
) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    if check and proc.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, args))} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout[-6000:]}\n--- stderr\n{proc.stderr[-6000:]}"
        )
    return proc


def _clean_env(*, bytecode: bool = False, **extra: str) -> Dict[str, str]:
    """The environment for a child: ``extra`` set, this run's Python settings not.

    Children import what their own interpreter has (or ``PYTHONPATH`` in
    ``extra``), not this checkout by accident. They write no bytecode (into
    the checkout, say) unless ``bytecode`` asks for it.
    """
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME"):
        env.pop(name, None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def _venv(python: str, path: Path) -> Path:
    _run([python, "-m", "venv", path])
    return path / "bin" / "python"


def _copy_project(source: Path, dest: Path) -> Path:
    shutil.copytree(
        source,
        dest,
        ignore=shutil.ignore_patterns(
            "__pycache__", "dist", "build", "*.egg-info", ".pytest_cache"
        ),
    )
    return dest


def _has_match(source: bytes) -> bool:
    return any(isinstance(node, ast.Match) for node in ast.walk(ast.parse(source)))


def _wheel_files(wheel: Path) -> Dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _sdist_files(sdist: Path) -> Dict[str, bytes]:
    with tarfile.open(sdist) as archive:
        files = {}
        for member in archive.getmembers():
            handle = archive.extractfile(member)
            if handle is not None:
                # Drop the leading "name-version/" folder.
                files[member.name.split("/", 1)[1]] = handle.read()
        return files


def _only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {folder}, found {found}"
    return found[0]


# -- file selection and per-file lowering -----------------------------------


@pytest.mark.parametrize(
    "path, selected",
    [
        ("src/pkg/mod.py", True),
        ("src/pkg/deep/er/mod.py", True),
        ("src/pkg/_native.py", False),
        ("src/pkg/_vendor/lib.py", False),
        ("src/pkg/api_pb2.py", False),
        ("tests/test_mod.py", False),
        ("src/pkg/stub.pyi", False),
        ("./src/pkg/mod.py", True),
    ],
)
def test_file_selector_globs(path: str, selected: bool) -> None:
    selector = FileSelector(
        ["src/**/*.py"], ["src/pkg/_native.py", "_vendor/", "*_pb2.py"]
    )
    assert selector.selects(path) is selected


def test_file_selector_defaults_to_every_python_file() -> None:
    selector = FileSelector()
    assert selector.selects("mod.py") and selector.selects("a/b/c.py")
    assert not FileSelector(include=[]).selects("mod.py")


def test_lower_file_bytes_keeps_the_source_encoding() -> None:
    source = "# -*- coding: latin-1 -*-\nmatch 1:\n    case 1:\n        x = 'é'\n"
    lowered = lower_file_bytes(source.encode("latin-1"), "m.py", "3.9")
    assert lowered is not None
    assert not _has_match(lowered)
    assert "'é'" in lowered.decode("latin-1")
    assert lower_file_bytes(b"x = 1\n", "m.py", "3.9") is None
    # No match statement: shipped as it is, without being parsed at all.
    assert lower_file_bytes(b"def f(:\n    matches = 1\n", "m.py", "3.9") is None


# Every line ending CPython takes, and a form feed before ``match``: the
# byte-level pre-scan of the builds and the import hook must see the match.
OLD_MAC = (
    b"def first(v):\r\x0c    match v:\r        case [a, *_]:\r            return a\r"
)
WINDOWS = OLD_MAC.replace(b"\r", b"\r\n")
BOM_FIRST = b"\xef\xbb\xbfmatch 1:\n    case 1:\n        X = 1\n"


@pytest.mark.parametrize(
    "raw", [OLD_MAC, WINDOWS, BOM_FIRST], ids=["cr", "crlf", "bom"]
)
def test_lower_file_bytes_sees_every_line_ending(raw: bytes) -> None:
    """What the hatchling hook and setuptools' build_py call for each module."""
    lowered = lower_file_bytes(raw, "m.py", "3.9")
    assert lowered is not None and not _has_match(lowered)
    ending = b"\r\n" if b"\r\n" in raw else b"\r" if b"\r" in raw else b"\n"
    assert lowered.count(ending) == raw.count(ending)


def test_lower_file_bytes_error_names_file_line_and_column() -> None:
    with pytest.raises(BuildError) as caught:
        lower_file_bytes(BROKEN_SOURCE.encode(), "src/pkg/broken.py", "3.9")
    assert str(caught.value) == _expected_error("src/pkg/broken.py")


def _broken_message() -> str:
    with pytest.raises(TranspileError) as caught:
        transpile(BROKEN_SOURCE)
    return caught.value.msg


def _expected_error(display_name: str) -> str:
    with pytest.raises(TranspileError) as caught:
        transpile(BROKEN_SOURCE, filename=display_name)
    message = caught.value.format()
    assert message.startswith(f"{display_name}:3:")
    return message


# -- import hook, in process ----------------------------------------------------


SHAPES = """\
def where(point):
    match point:
        case (0, 0):
            return "origin"
        case (x, 0) | (0, x):
            return f"axis {x}"
        case (x, y) if x < 0:
            raise ValueError(f"negative {x}")
        case _:
            return "elsewhere"
"""

MODULE_LEVEL = """\
match {"kind": "config", "level": 3}:
    case {"kind": "config", "level": int(level)}:
        LEVEL = level
    case _:
        LEVEL = None
"""


@pytest.fixture
def hook_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A source tree on sys.path, fresh caches, and cleanup of hooks and modules."""
    project = tmp_path / "project"
    package = project / "hookpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "shapes.py").write_text(SHAPES)
    (package / "settings.py").write_text(MODULE_LEVEL)
    monkeypatch.setenv("SPAM_TRANSPILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.syspath_prepend(str(project))
    finders_before = list(sys.meta_path)
    modules_before = set(sys.modules)
    yield project
    sys.meta_path[:] = finders_before
    for name in set(sys.modules) - modules_before:
        del sys.modules[name]
    importlib.invalidate_caches()


def _forget(*names: str) -> None:
    for name in names:
        sys.modules.pop(name, None)
    importlib.invalidate_caches()


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _uses_match_opcodes(module: types.ModuleType) -> bool:
    code = module.__loader__.get_code(module.__name__)
    return any(
        instr.opname.startswith("MATCH_")
        for obj in _code_objects(code)
        for instr in dis.get_instructions(obj)
    )


def test_hook_lowers_modules_under_a_path(hook_project: Path) -> None:
    install_import_hook([hook_project])
    shapes = importlib.import_module("hookpkg.shapes")
    settings = importlib.import_module("hookpkg.settings")
    assert isinstance(shapes.__loader__, TranspilingLoader)
    assert not _uses_match_opcodes(shapes)
    assert not _uses_match_opcodes(settings)
    assert shapes.where((0, 0)) == "origin"
    assert shapes.where((0, 5)) == "axis 5"
    assert shapes.where((1, 2)) == "elsewhere"
    assert settings.LEVEL == 3
    assert shapes.__file__ == str(hook_project / "hookpkg" / "shapes.py")


def test_hook_lowers_old_mac_line_endings(hook_project: Path) -> None:
    (hook_project / "hookpkg" / "old_mac.py").write_bytes(OLD_MAC)
    install_import_hook([hook_project])
    module = importlib.import_module("hookpkg.old_mac")
    assert isinstance(module.__loader__, TranspilingLoader)
    assert not _uses_match_opcodes(module)
    assert module.first([7, 8]) == 7


def test_hook_tracebacks_show_the_users_file_and_line(hook_project: Path) -> None:
    install_import_hook([hook_project])
    shapes = importlib.import_module("hookpkg.shapes")
    with pytest.raises(ValueError) as caught:
        shapes.where((-1, 2))
    frame = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert frame.filename == str(hook_project / "hookpkg" / "shapes.py")
    assert frame.lineno == 8
    assert frame.line == 'raise ValueError(f"negative {x}")'


def test_hook_second_import_uses_bytecode_then_cache(
    hook_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finder = install_import_hook([hook_project])
    shapes = importlib.import_module("hookpkg.shapes")
    pyc = Path(shapes.__cached__)
    assert pyc.parent.name == "__pycache__"
    assert ".opt-spam" in pyc.name and pyc.exists()

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("lowered again although a cache holds the result")

    monkeypatch.setattr(import_hook, "transpile", refuse)
    _forget("hookpkg.shapes")
    assert importlib.import_module("hookpkg.shapes").where((0, 0)) == "origin"

    pyc.unlink()
    _forget("hookpkg.shapes")
    assert importlib.import_module("hookpkg.shapes").where((3, 0)) == "axis 3"
    assert pyc.exists(), "the bytecode file is written again from the cached source"

    finder.uninstall()
    assert finder not in sys.meta_path


def test_hook_recompiles_a_changed_source(hook_project: Path) -> None:
    install_import_hook([hook_project])
    assert importlib.import_module("hookpkg.settings").LEVEL == 3
    path = hook_project / "hookpkg" / "settings.py"
    path.write_text(MODULE_LEVEL.replace('"level": 3', '"level": 42'))
    _forget("hookpkg.settings")
    assert importlib.import_module("hookpkg.settings").LEVEL == 42


def test_hook_without_cache_writes_nothing(hook_project: Path, tmp_path: Path) -> None:
    install_import_hook([hook_project], cache=False)
    shapes = importlib.import_module("hookpkg.shapes")
    assert shapes.where((0, 0)) == "origin"
    assert not (hook_project / "hookpkg" / "__pycache__").exists()
    assert not (tmp_path / "cache").exists()


def test_hook_error_names_file_line_and_column(hook_project: Path) -> None:
    broken = hook_project / "hookpkg" / "broken.py"
    broken.write_text(BROKEN_SOURCE)
    install_import_hook([hook_project])
    with pytest.raises(SyntaxError) as caught:
        importlib.import_module("hookpkg.broken")
    error = caught.value
    assert isinstance(error, TranspileError)
    assert str(error) == _expected_error(str(broken))
    assert (error.filename, error.lineno) == (str(broken), 3)
    assert "case 1 | other:" in error.text
    # The display python prints: file, line, the line, a caret under the column.
    shown = "".join(traceback.format_exception_only(type(error), error))
    assert f'File "{broken}", line 3' in shown
    assert "case 1 | other:" in shown and "^" in shown


def test_hook_scope_by_path_and_by_package(hook_project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "otherpkg").mkdir(parents=True)
    (elsewhere / "otherpkg" / "__init__.py").write_text(SHAPES)
    (elsewhere / "plainmod.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(elsewhere))
    try:
        install_import_hook([hook_project])
        assert isinstance(
            importlib.import_module("hookpkg.shapes").__loader__, TranspilingLoader
        )
        plain = importlib.import_module("plainmod")
        assert type(plain.__loader__) is importlib.machinery.SourceFileLoader
        install_import_hook(packages=["otherpkg"])
        other = importlib.import_module("otherpkg")
        assert isinstance(other.__loader__, TranspilingLoader)
        assert other.where((0, 7)) == "axis 7"
    finally:
        sys.path.remove(str(elsewhere))


def test_hook_leaves_installed_packages_below_a_path_alone(
    hook_project: Path,
) -> None:
    site = hook_project / ".venv" / "lib" / "python3.9" / "site-packages"
    site.mkdir(parents=True)
    (site / "thirdparty.py").write_text("VALUE = 2\n")
    sys.path.insert(0, str(site))
    try:
        install_import_hook([hook_project])
        module = importlib.import_module("thirdparty")
        assert type(module.__loader__) is importlib.machinery.SourceFileLoader
    finally:
        sys.path.remove(str(site))


def test_install_import_hook_validates_its_arguments() -> None:
    everywhere = install_import_hook()  # outside the stdlib and installed code
    everywhere.uninstall()
    assert everywhere.everywhere and not everywhere.paths
    with pytest.raises(TranspileError, match="unknown target"):
        install_import_hook(["."], target="3.5")
    finder = install_import_hook(".")  # one path given as a string
    try:
        assert isinstance(finder, TranspilingFinder)
        assert finder.paths == (os.path.realpath("."),)
    finally:
        finder.uninstall()


# -- spam_transpile.run ------------------------------------------------------------


def test_run_parses_options_script_and_module() -> None:
    inv = parse_args(["--target", "3.8", "--path=src", "app.py", "-v", "--x"])
    assert (inv.target, inv.paths, inv.script, inv.args) == (
        "3.8",
        ["src"],
        "app.py",
        ["-v", "--x"],
    )
    inv = parse_args(["--package", "pkg", "--no-cache", "-m", "unittest", "-v"])
    assert (inv.packages, inv.cache, inv.module, inv.args) == (
        ["pkg"],
        False,
        "unittest",
        ["-v"],
    )
    assert parse_args(["-mpytest", "-q"]).module == "pytest"
    assert parse_args(["--", "-odd-name.py"]).script == "-odd-name.py"
    for bad in ([], ["--path"], ["--bogus", "x.py"]):
        with pytest.raises(UsageError):
            parse_args(bad)


RUN_SCRIPT = """\
import sys
import helper
print("argv", sys.argv)
print("name", __name__)
print("path0", sys.path[0])
print("file", __file__)
match sys.argv[1:]:
    case ["fail", *_]:
        helper.explode()
    case [*args]:
        print("args", args)
"""

RUN_HELPER = """\
def explode():
    match 1:
        case 1:
            raise RuntimeError("boom")
"""


def _write_run_tree(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text(RUN_SCRIPT)
    (folder / "helper.py").write_text(RUN_HELPER)
    (folder / "broken.py").write_text(BROKEN_SOURCE)
    (folder / "importer.py").write_text("import broken\n")
    return folder


def _check_run_script(python: Path | str, folder: Path, env: Dict[str, str]) -> None:
    elsewhere = folder.parent
    ok = _run(
        [python, "-m", "spam_transpile.run", folder / "app.py", "a", "-b"],
        cwd=elsewhere,
        env=env,
    )
    assert f"argv ['{folder / 'app.py'}', 'a', '-b']" in ok.stdout
    assert "name __main__" in ok.stdout
    assert f"path0 {os.path.realpath(folder)}" in ok.stdout
    assert f"file {folder / 'app.py'}" in ok.stdout
    assert "args ['a', '-b']" in ok.stdout

    failed = _run(
        [python, "-m", "spam_transpile.run", "app.py", "fail"],
        cwd=folder,
        env=env,
        check=False,
    )
    assert failed.returncode == 1
    assert f'File "{folder / "app.py"}", line 9, in <module>' in failed.stderr
    assert f'File "{folder / "helper.py"}", line 4, in explode' in failed.stderr
    assert 'raise RuntimeError("boom")' in failed.stderr
    assert failed.stderr.rstrip().endswith("RuntimeError: boom")

    broken = _run(
        [python, "-m", "spam_transpile.run", "importer.py"],
        cwd=folder,
        env=env,
        check=False,
    )
    assert broken.returncode == 1
    assert f'File "{folder / "broken.py"}", line 3' in broken.stderr
    assert "case 1 | other:" in broken.stderr
    assert f"TranspileError: {_broken_message()}" in broken.stderr


@pytest.mark.slow
def test_run_script_and_module_on_this_interpreter(tmp_path: Path) -> None:
    folder = _write_run_tree(tmp_path / "tree")
    env = _clean_env(
        PYTHONPATH=str(ROOT), SPAM_TRANSPILE_CACHE_DIR=str(tmp_path / "cache")
    )
    _check_run_script(sys.executable, folder, env)
    as_module = _run(
        [sys.executable, "-m", "spam_transpile.run", "-m", "app", "x"],
        cwd=folder,
        env=env,
    )
    assert f"argv ['{folder / 'app.py'}', 'x']" in as_module.stdout
    assert "name __main__" in as_module.stdout
    missing = _run(
        [sys.executable, "-m", "spam_transpile.run", "-m", "no_such_mod"],
        cwd=folder,
        env=env,
        check=False,
    )
    assert missing.returncode == 1
    assert "No module named no_such_mod" in missing.stderr
    usage = _run(
        [sys.executable, "-m", "spam_transpile.run", "--target", "3.5", "app.py"],
        cwd=folder,
        env=env,
        check=False,
    )
    assert usage.returncode == 2 and "unknown target" in usage.stderr


# -- builds ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("integrations")


@pytest.fixture(scope="session")
def build_python(work: Path) -> Path:
    """A virtualenv with the `build` front end, on this test run's interpreter."""
    python = _venv(sys.executable, work / "build-venv")
    _run([python, "-m", "pip", "install", "--quiet", "build"])
    return python


@pytest.fixture(scope="session")
def wheelhouse(work: Path, build_python: Path) -> Path:
    """This checkout built as a wheel, for isolated build environments to install."""
    folder = work / "wheelhouse"
    _run([build_python, "-m", "build", "--wheel", "--outdir", folder, ROOT])
    _only(folder, "spam_transpile-*.whl")
    return folder


def _require_hatch_hook(wheelhouse: Path) -> None:
    """Fail with the fix when this checkout does not register the hatchling hook."""
    wheel = _only(wheelhouse, "spam_transpile-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(
            (
                archive.read(name).decode()
                for name in archive.namelist()
                if name.endswith(".dist-info/entry_points.txt")
            ),
            "",
        )
    if "spam_transpile.integrations.hatch_build" not in entry_points:
        pytest.fail(f"the hatchling hook is not registered: {ENTRY_POINT_HINT}")


def _build_env(wheelhouse: Path) -> Dict[str, str]:
    links = [os.environ.get("PIP_FIND_LINKS", ""), str(wheelhouse)]
    return _clean_env(PIP_FIND_LINKS=" ".join(link for link in links if link))


def _python_build(
    build_python: Path, project: Path, wheelhouse: Path, *options: str
) -> subprocess.CompletedProcess:
    return _run(
        [build_python, "-m", "build", *options, "--outdir", project / "dist", project],
        env=_build_env(wheelhouse),
        check=False,
    )


def _setuptools_project(dest: Path) -> Path:
    project = _copy_project(SAMPLE, dest)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(SETUPTOOLS_OVERLAY / name, project / name)
    return project


@pytest.fixture(scope="session")
def hatch_dist(work: Path, build_python: Path, wheelhouse: Path) -> Path:
    _require_hatch_hook(wheelhouse)
    project = _copy_project(SAMPLE, work / "hatch-project")
    # Default `python -m build`: the sdist, then the wheel built from it.
    proc = _python_build(build_python, project, wheelhouse)
    return _dist_with_log(project, proc)


@pytest.fixture(scope="session")
def setuptools_dist(work: Path, build_python: Path, wheelhouse: Path) -> Path:
    project = _setuptools_project(work / "setuptools-project")
    proc = _python_build(build_python, project, wheelhouse)
    return _dist_with_log(project, proc)


def _dist_with_log(project: Path, proc: subprocess.CompletedProcess) -> Path:
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # Kept beside dist/ for the tests of what the build says.
    (project / "build.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    return project / "dist"


BACKENDS = ["hatch_dist", "setuptools_dist"]


@pytest.mark.slow
@pytest.mark.parametrize("dist_fixture", BACKENDS)
def test_wheel_holds_lowered_modules(
    dist_fixture: str, request: pytest.FixtureRequest
) -> None:
    dist: Path = request.getfixturevalue(dist_fixture)
    files = _wheel_files(_only(dist, "sample_shapes-1.0.0-*.whl"))
    source_dir = SAMPLE / "src" / PACKAGE
    for module in SAMPLE_MODULES:
        original = (source_dir / module).read_bytes()
        shipped = files[f"{PACKAGE}/{module}"]
        assert not _has_match(shipped), module
        assert shipped.count(b"\n") == original.count(b"\n"), module
        if _has_match(original):
            assert shipped != original, module
    # Excluded by the include/exclude globs: shipped as written.
    native = (source_dir / NATIVE_MODULE).read_bytes()
    assert _has_match(native)
    assert files[f"{PACKAGE}/{NATIVE_MODULE}"] == native


@pytest.mark.slow
@pytest.mark.parametrize("dist_fixture", BACKENDS)
def test_wheel_metadata_is_the_users(
    dist_fixture: str, request: pytest.FixtureRequest
) -> None:
    dist: Path = request.getfixturevalue(dist_fixture)
    files = _wheel_files(_only(dist, "sample_shapes-1.0.0-*.whl"))
    metadata = next(
        data.decode() for name, data in files.items() if name.endswith("/METADATA")
    )
    assert "Name: sample-shapes" in metadata
    assert "Requires-Python: >=3.8" in metadata
    assert "Requires-Dist" not in metadata, "the hook must add no dependency"
    assert not any("spam" in name.lower() for name in files)


@pytest.mark.slow
@pytest.mark.parametrize("dist_fixture", BACKENDS)
def test_sdist_keeps_the_original_sources(
    dist_fixture: str, request: pytest.FixtureRequest
) -> None:
    dist: Path = request.getfixturevalue(dist_fixture)
    files = _sdist_files(_only(dist, "sample_shapes-1.0.0.tar.gz"))
    for module in SAMPLE_MODULES + [NATIVE_MODULE]:
        original = (SAMPLE / "src" / PACKAGE / module).read_bytes()
        assert files[f"src/{PACKAGE}/{module}"] == original, module


@pytest.mark.slow
@pytest.mark.parametrize("dist_fixture", BACKENDS)
def test_every_backend_says_which_settings_it_used_and_what_it_lowered(
    dist_fixture: str, request: pytest.FixtureRequest
) -> None:
    """[tool.spam-transpile] is read by both; the target follows requires-python."""
    dist: Path = request.getfixturevalue(dist_fixture)
    log = (dist.parent / "build.log").read_text("utf-8")
    # The wheel is built from the unpacked sdist, whose pyproject.toml is read.
    settings = (
        r"spam-transpile: settings: \S+/pyproject\.toml \[tool\.spam-transpile\]; "
        r"target 3\.8 from requires-python '>=3\.8'"
    )
    assert re.search(settings, log), log[-3000:]
    lowered = re.findall(
        r"spam-transpile: lowered (\d+) of (\d+) modules for Python 3\.8", log
    )
    # The wheel step (hatchling builds it from the sdist: same counts).
    assert lowered and lowered[-1] == ("4", "6"), log[-3000:]


BAD_SETTINGS = {
    # An unknown key in the hatch table: the error points at its line.
    "hatchling": (
        "[tool.hatch.build.hooks.spam-transpile]",
        '[tool.hatch.build.hooks.spam-transpile]\nexlcude = ["x"]',
        "unknown option 'exlcude'",
    ),
    # A target newer than requires-python allows would install and fail there.
    "setuptools": (
        "[tool.spam-transpile]",
        '[tool.spam-transpile]\ntarget = "3.9"',
        "target 3.9 is newer than Python 3.8",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["hatchling", "setuptools"])
def test_bad_settings_fail_the_build_at_the_keys_line(
    backend: str, work: Path, build_python: Path, wheelhouse: Path
) -> None:
    dest = work / f"bad-settings-{backend}"
    if backend == "hatchling":
        _require_hatch_hook(wheelhouse)
        project = _copy_project(SAMPLE, dest)
    else:
        project = _setuptools_project(dest)
    header, replacement, message = BAD_SETTINGS[backend]
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text("utf-8").replace(header, replacement)
    pyproject.write_text(text, encoding="utf-8")
    line = text.splitlines().index(replacement.splitlines()[1]) + 1
    proc = _python_build(build_python, project, wheelhouse, "--wheel")
    assert proc.returncode != 0
    assert f"{pyproject}:{line}:1: error: {message}" in proc.stdout + proc.stderr
    dist = project / "dist"
    assert not dist.exists() or not any(dist.iterdir()), list(dist.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["hatchling", "setuptools"])
def test_broken_module_fails_the_build_and_leaves_dist_empty(
    backend: str, work: Path, build_python: Path, wheelhouse: Path
) -> None:
    dest = work / f"broken-{backend}"
    if backend == "hatchling":
        _require_hatch_hook(wheelhouse)
        project = _copy_project(SAMPLE, dest)
        options: List[str] = []  # sdist then wheel: the sdist step fails already
    else:
        project = _setuptools_project(dest)
        options = ["--wheel"]
    relative = f"src/{PACKAGE}/broken.py"
    (project / relative).write_text(BROKEN_SOURCE)
    proc = _python_build(build_python, project, wheelhouse, *options)
    assert proc.returncode != 0
    assert _expected_error(relative) in proc.stdout + proc.stderr
    dist = project / "dist"
    assert not dist.exists() or not any(dist.iterdir()), list(dist.iterdir())


SETUP_PY = """\
from setuptools import find_packages, setup

from spam_transpile.integrations.setuptools import build_py

setup(
    name="sample-shapes",
    version="1.0.0",
    package_dir={"": "src"},
    packages=find_packages("src"),
    cmdclass={"build_py": build_py},
)
"""


@pytest.mark.slow
def test_setuptools_build_py_from_setup_py(tmp_path: Path) -> None:
    """The command class from a plain setup.py, options on the command line."""
    pytest.importorskip("setuptools")
    project = tmp_path / "project"
    shutil.copytree(SAMPLE / "src", project / "src")
    (project / "setup.py").write_text(SETUP_PY)
    (project / "src" / PACKAGE / "old_mac.py").write_bytes(OLD_MAC)
    env = _clean_env(PYTHONPATH=str(ROOT))
    command = [sys.executable, "setup.py", "-q", "build_py", "--build-lib", "out"]
    exclude = ["--transpile-exclude", f"src/{PACKAGE}/{NATIVE_MODULE}"]
    _run(command + exclude, cwd=project, env=env)
    built = project / "out" / PACKAGE
    assert not _has_match((built / "geometry.py").read_bytes())
    assert not _has_match((built / "old_mac.py").read_bytes())
    assert not _has_match((built / "formats" / "records.py").read_bytes())
    assert _has_match((built / NATIVE_MODULE).read_bytes())
    assert _has_match((project / "src" / PACKAGE / "geometry.py").read_bytes())

    relative = f"src/{PACKAGE}/broken.py"
    (project / relative).write_text(BROKEN_SOURCE)
    failed = _run(command, cwd=project, env=env, check=False)
    assert failed.returncode != 0
    # distutils prints its errors as "error: MESSAGE", without a traceback.
    assert f"error: {_expected_error(relative)}" in failed.stderr
    assert "Traceback" not in failed.stderr


HATCH_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.18", "spam-transpile"]
build-backend = "hatchling.build"

[project]
name = "oldmac"
version = "1.0"
requires-python = ">=3.9"

[tool.hatch.build.targets.wheel]
packages = ["src/oldmac"]

[tool.hatch.build.hooks.spam-transpile]
"""


@pytest.mark.slow
def test_hatch_wheel_lowers_old_mac_line_endings(tmp_path: Path) -> None:
    """The hatchling hook, in this environment (no isolated build): a module
    whose lines end with a lone \\r is lowered into the wheel."""
    from importlib.metadata import entry_points

    pytest.importorskip("hatchling")
    registered = [e.name for e in entry_points(group="hatch")]
    if "spam-transpile" not in registered:
        pytest.fail(f"the hatchling hook is not registered: {ENTRY_POINT_HINT}")
    project = tmp_path / "project"
    (project / "src" / "oldmac").mkdir(parents=True)
    (project / "pyproject.toml").write_text(HATCH_PYPROJECT)
    (project / "src" / "oldmac" / "__init__.py").write_bytes(OLD_MAC)
    _run([sys.executable, "-m", "hatchling", "build", "-t", "wheel"], cwd=project)
    files = _wheel_files(_only(project / "dist", "oldmac-1.0-*.whl"))
    shipped = files["oldmac/__init__.py"]
    assert not _has_match(shipped) and shipped.count(b"\r") == OLD_MAC.count(b"\r")


# -- on CPython 3.9 -----------------------------------------------------------------


@pytest.fixture(scope="session")
def python39() -> str:
    return require_interpreter("3.9")


def _run_sample_tests(python: Path, cwd: Path, env: Dict[str, str], *prefix: str):
    proc = _run(
        [python, *prefix, "-m", "unittest", "discover", "-s", "tests", "-v"],
        cwd=cwd,
        env=env,
    )
    assert f"Ran {SAMPLE_TEST_COUNT} tests" in proc.stderr
    assert proc.stderr.rstrip().endswith("OK")
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("dist_fixture", BACKENDS)
def test_installed_wheel_passes_the_sample_tests_on_39(
    dist_fixture: str, request: pytest.FixtureRequest, python39: str, work: Path
) -> None:
    dist: Path = request.getfixturevalue(dist_fixture)
    venv = work / f"py39-{dist_fixture}"
    python = _venv(python39, venv / "venv")
    wheel = _only(dist, "sample_shapes-1.0.0-*.whl")
    _run([python, "-m", "pip", "install", "--quiet", "--no-index", wheel])
    # Only the tests, so the package can only come from the installed wheel.
    shutil.copytree(SAMPLE / "tests", venv / "tests")
    env = _clean_env()
    where = _run(
        [python, "-c", f"import {PACKAGE}; print({PACKAGE}.__file__)"],
        cwd=venv,
        env=env,
    )
    assert "site-packages" in where.stdout
    _run_sample_tests(python, venv, env)


@pytest.fixture(scope="session")
def python39_with_spam(python39: str, work: Path, wheelhouse: Path) -> Path:
    python = _venv(python39, work / "py39-spam")
    wheel = _only(wheelhouse, "spam_transpile-*.whl")
    _run([python, "-m", "pip", "install", "--quiet", wheel])
    return python


@pytest.mark.slow
def test_sample_tests_pass_on_39_through_the_import_hook(
    python39_with_spam: Path, work: Path
) -> None:
    project = _copy_project(SAMPLE, work / "run-project")
    env = _clean_env(
        bytecode=True,
        PYTHONPATH="src",
        SPAM_TRANSPILE_CACHE_DIR=str(work / "run-cache"),
    )
    hook = ["-m", "spam_transpile.run"]
    _run_sample_tests(python39_with_spam, project, env, *hook)
    pycache = project / "src" / PACKAGE / "__pycache__"
    lowered = sorted(p.name for p in pycache.glob("*.opt-spam*.pyc"))
    assert any(
        # t38: the target follows the sample's requires-python (>=3.8).
        name.startswith("geometry.cpython-39.opt-spam") and name.endswith("t38.pyc")
        for name in lowered
    ), lowered
    assert any((work / "run-cache").rglob("*")), "lowered sources are cached"
    # Second run: everything comes from the caches.
    _run_sample_tests(python39_with_spam, project, env, *hook)


@pytest.mark.slow
def test_pythonpath_modules_are_lowered_on_39(
    python39_with_spam: Path, work: Path
) -> None:
    """`cd tests && PYTHONPATH=../src python -m spam_transpile.run -m unittest`."""
    project = _copy_project(SAMPLE, work / "pythonpath-project")
    env = _clean_env(
        PYTHONPATH="../src", SPAM_TRANSPILE_CACHE_DIR=str(work / "pythonpath-cache")
    )
    proc = _run(
        [python39_with_spam, "-m", "spam_transpile.run", "-m", "unittest", "-v"],
        cwd=project / "tests",
        env=env,
    )
    assert f"Ran {SAMPLE_TEST_COUNT} tests" in proc.stderr
    assert proc.stderr.rstrip().endswith("OK")


@pytest.mark.slow
def test_skipped_module_names_the_option_that_lowers_it_on_39(
    python39_with_spam: Path, work: Path
) -> None:
    folder = work / "skipped"
    site = folder / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "vendored_shapes.py").write_text(RUN_HELPER)
    (folder / "app.py").write_text("import vendored_shapes\n")
    env = _clean_env(PYTHONPATH=str(site))
    proc = _run(
        [python39_with_spam, "-m", "spam_transpile.run", "app.py"],
        cwd=folder,
        env=env,
        check=False,
    )
    assert proc.returncode == 1
    assert "SyntaxError" in proc.stderr
    assert f"spam_transpile did not lower {site / 'vendored_shapes.py'}" in proc.stderr
    assert "--package vendored_shapes" in proc.stderr
    lowered = _run(
        [python39_with_spam, "-m", "spam_transpile.run"]
        + ["--package", "vendored_shapes", "app.py"],
        cwd=folder,
        env=env,
    )
    assert lowered.returncode == 0


@pytest.mark.slow
def test_run_script_on_39(python39_with_spam: Path, work: Path) -> None:
    folder = _write_run_tree(work / "run-script-39")
    env = _clean_env(SPAM_TRANSPILE_CACHE_DIR=str(work / "run-cache-script"))
    _check_run_script(python39_with_spam, folder, env)
