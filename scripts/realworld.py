#!/usr/bin/env python3
"""Real code nobody on the project wrote: lower public projects, run their tests.

    python scripts/realworld.py [--only NAME ...] [--layouts keep-lines,readable]
                                [--pythons 3.9,3.10,3.11] [--workdir DIR] [--list]

For each project of scripts/realworld_projects.toml (a PyPI sdist pinned by
version and sha256, whose own tests run offline): download and unpack it into
the work folder (the user cache folder unless --workdir), make a virtual
environment per interpreter with its test dependencies, run its tests
natively, lower the paths the table names with ``spam-transpile SRC -o OUT``
in each layout, install the lowered copy and run the same tests on it. The
outcome of every test (passed, failed, skipped, error) must be the same
natively and lowered, on the same interpreter; on 3.9, which cannot run the
native code, the lowered run is compared with the native run on the first
interpreter of the project's ``pythons``.

Prints a table (match statements lowered; passed/failed/skipped/errors
natively and per layout) and every difference. Exit status: 0 all the same,
1 a test's outcome differs, 2 a step failed (download, unpacking, transpiling,
installing, a run that crashed or timed out).
"""

from __future__ import annotations

import argparse
import ast
import email.parser
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ElementTree
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from interpreters import find_interpreter  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # the tool runs on 3.9+; tomli is its dependency there
    import tomli as tomllib

TABLE = Path(__file__).resolve().parent / "realworld_projects.toml"
LAYOUTS = ("keep-lines", "readable")
NATIVE = "native"
OUTCOMES = ("passed", "failed", "skipped", "error")
# pip's words when it could not reach an index or find the file there at all.
_UNREACHABLE = re.compile(
    r"No matching distribution found|Could not find a version that satisfies"
    r"|Failed to establish a new connection|Temporary failure in name resolution"
    r"|Network is unreachable|Connection refused|ConnectTimeout|ReadTimeout"
    r"|Max retries exceeded",
)


class StepError(Exception):
    """A step that is not a test outcome failed: the project cannot be compared."""


class RegistryUnreachable(StepError):
    """PyPI (or the file on it) could not be reached: nothing was compared."""


class SourceUnavailable(StepError):
    """A project taken from a repository snapshot that this machine does not have."""


@dataclass(frozen=True)
class Project:
    name: str
    # The source: an sdist on PyPI (requirement "NAME==VERSION" and its
    # sha256), or a commit of a repository snapshot (git "owner/name").
    requirement: str
    sha256: str
    git: str
    commit: str
    lower: Tuple[str, ...]
    pytest_args: Tuple[str, ...]
    test_deps: Tuple[str, ...]
    pythons: Tuple[str, ...]
    py39: str
    deselect: Tuple[Tuple[str, str], ...]
    timeout: float
    modules: Tuple[str, ...]
    transpile_args: Tuple[str, ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()

    @property
    def source(self) -> str:
        return self.requirement or f"{self.git}@{self.commit[:12]}"

    @property
    def distribution(self) -> str:
        return self.requirement.split("==")[0]

    @property
    def version(self) -> str:
        return self.requirement.split("==")[1]

    def interpreters(self, wanted: Sequence[str]) -> List[str]:
        """The interpreters this project runs on, among ``wanted``."""
        # 3.9 last: its lowered runs are compared with a native run made before.
        mine = list(self.pythons) + ([] if self.py39 else ["3.9"])
        return [v for v in mine if v in wanted]


def load_projects(path: Path = TABLE) -> List[Project]:
    with path.open("rb") as handle:
        table = tomllib.load(handle)
    projects = []
    for entry in table["project"]:
        projects.append(
            Project(
                name=entry["name"],
                requirement=entry.get("requirement", ""),
                sha256=entry.get("sha256", ""),
                git=entry.get("git", ""),
                commit=entry.get("commit", ""),
                lower=tuple(entry["lower"]),
                pytest_args=tuple(entry["pytest_args"]),
                test_deps=tuple(entry["test_deps"]),
                pythons=tuple(entry["pythons"]),
                py39=entry.get("py39", ""),
                deselect=tuple((i, r) for i, r in entry.get("deselect", [])),
                timeout=float(entry.get("timeout", 900)),
                modules=tuple(entry["modules"]),
                transpile_args=tuple(entry.get("transpile_args", [])),
                env=tuple(sorted(entry.get("env", {}).items())),
            )
        )
        if bool(entry.get("requirement")) == bool(entry.get("git")):
            raise ValueError(f"{entry['name']}: give either requirement or git")
    return projects


# --- running commands ---------------------------------------------------------


@dataclass
class Ran:
    returncode: Optional[int]  # None: timed out and killed
    output: str
    seconds: float


def run(
    cmd: Sequence[str],
    *,
    cwd: Optional[Path] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 600,
) -> Ran:
    """Run ``cmd`` with stdout and stderr together; kill its whole group on timeout."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as out:
        process = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            # A test suite starts subprocesses of its own: a timeout must end them too.
            start_new_session=True,
        )
        returncode: Optional[int] = None
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            # Also on Ctrl-C or SIGTERM: leave no test suite running behind us.
            if returncode is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        out.seek(0)
        return Ran(returncode, out.read(), time.monotonic() - start)


def check(ran: Ran, what: str) -> Ran:
    if ran.returncode == 0:
        return ran
    why = "timed out" if ran.returncode is None else f"exit {ran.returncode}"
    raise StepError(f"{what}: {why}\n{tail(ran.output)}")


def tail(text: str, lines: int = 25) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-lines:])


def quiet_env(extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    # The harness's own venv must not leak into the projects' interpreters.
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.update(extra or {})
    return env


# --- getting the source -------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(project: Project, workdir: Path) -> Path:
    """The project's sdist, from the cache folder or from PyPI, hash checked."""
    folder = workdir / "downloads"
    folder.mkdir(parents=True, exist_ok=True)
    for candidate in folder.iterdir():
        if candidate.is_file() and sha256_of(candidate) == project.sha256:
            return candidate
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        reqs = Path(tmp) / "requirements.txt"
        reqs.write_text(f"{project.requirement} --hash=sha256:{project.sha256}\n")
        ran = run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                project.distribution,
                "--require-hashes",
                "-r",
                str(reqs),
                "-d",
                tmp,
            ],
            env=quiet_env(),
            timeout=600,
        )
        if ran.returncode != 0:
            kind = (
                RegistryUnreachable
                if ran.returncode is None or _UNREACHABLE.search(ran.output)
                else StepError
            )
            raise kind(f"pip download {project.requirement} failed\n{tail(ran.output)}")
        files = [p for p in Path(tmp).iterdir() if p.name != "requirements.txt"]
        if len(files) != 1 or sha256_of(files[0]) != project.sha256:
            raise StepError(
                f"pip download {project.requirement}: not one sdist of that sha256"
            )
        target = folder / files[0].name
        shutil.move(str(files[0]), target)
        return target


def default_mirrors() -> Path:
    return Path(os.environ.get("SPAM_TRANSPILE_MIRRORS", "/work/.mirror"))


def export_commit(project: Project, workdir: Path, mirrors: Path) -> Path:
    """A tar of ``project.commit`` from the bare git folder of a fetched snapshot."""
    git_dir = mirrors / project.git.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise SourceUnavailable(f"no snapshot of {project.git} at {git_dir}")
    folder = workdir / "downloads"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{project.name}-{project.commit}.tar"
    if not target.exists():
        cmd = ["git", "--git-dir", str(git_dir), "archive", "--format=tar"]
        cmd += [f"--prefix={project.name}-{project.commit[:12]}/", "-o", str(target)]
        cmd += [project.commit]
        check(run(cmd, timeout=300), f"git archive {project.source}")
    return target


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack a fresh copy of ``archive`` into ``dest``; return the sdist's top folder."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(dest)
    else:
        with tarfile.open(archive) as tarred:
            if hasattr(tarfile, "data_filter"):
                tarred.extractall(dest, filter="data")
            else:  # pragma: no cover - Pythons before the extraction filters
                tarred.extractall(dest)
    tops = list(dest.iterdir())
    if len(tops) != 1 or not tops[0].is_dir():
        raise StepError(f"{archive.name}: expected one top folder, found {len(tops)}")
    return tops[0]


# --- lowering -----------------------------------------------------------------


def python_files(path: Path) -> List[Path]:
    if path.is_file():
        return [path] if path.suffix == ".py" else []
    return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)


def count_matches(paths: Sequence[Path]) -> int:
    """Match statements in the .py files under ``paths`` (parsed by this interpreter)."""
    total = 0
    for path in paths:
        for file in python_files(path):
            try:
                tree = ast.parse(file.read_bytes(), str(file))
            except (SyntaxError, ValueError) as error:
                raise StepError(f"{file}: not parsed by this Python: {error}") from None
            total += sum(isinstance(node, ast.Match) for node in ast.walk(tree))
    return total


def transpiler_command() -> List[str]:
    """``spam-transpile`` as installed beside this interpreter, else ``-m``."""
    script = Path(sys.executable).with_name("spam-transpile")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "spam_transpile"]


def lower_tree(project: Project, source: Path, dest: Path, layout: str) -> float:
    """``dest``: a copy of ``source`` whose ``project.lower`` paths went through
    ``spam-transpile PATH -o OUT``; return the seconds the tool took."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, symlinks=True)
    seconds = 0.0
    for rel in project.lower:
        out = dest / rel
        if out.is_dir():
            shutil.rmtree(out)
        elif out.exists():
            out.unlink()
        cmd = transpiler_command() + [str(source / rel), "-o", str(out)]
        cmd += ["--layout", layout, "--no-cache", "-q", *project.transpile_args]
        ran = check(
            run(cmd, cwd=source, timeout=900), f"spam-transpile {rel} ({layout})"
        )
        seconds += ran.seconds
        missing = [
            str(file.relative_to(source))
            for file in python_files(source / rel)
            if not (dest / file.relative_to(source)).is_file()
        ]
        if missing:
            raise StepError(
                f"spam-transpile {rel} -o OUT ({layout}) exited 0 without writing"
                f" {len(missing)} of its .py files, e.g. {missing[0]}"
            )
    left = count_matches([dest / rel for rel in project.lower])
    if left:
        raise StepError(f"{layout}: {left} match statements left in the output")
    return seconds


# --- environments ---------------------------------------------------------------


def build_requirements(tree: Path) -> List[str]:
    pyproject = tree / "pyproject.toml"
    if pyproject.exists():
        with pyproject.open("rb") as handle:
            system = tomllib.load(handle).get("build-system", {})
        if "requires" in system:
            return list(system["requires"])
    return ["setuptools", "wheel"]


def runtime_requirements(tree: Path) -> List[str]:
    """The unconditional Requires-Dist of the sdist's PKG-INFO."""
    info = tree / "PKG-INFO"
    if not info.exists():
        raise StepError(f"{tree.name}: no PKG-INFO to take its dependencies from")
    message = email.parser.Parser().parsestr(info.read_text(encoding="utf-8"))
    return [r for r in message.get_all("Requires-Dist") or [] if "extra ==" not in r]


def pip_install_flags(version: str) -> List[str]:
    # The projects declare requires-python >= 3.10; on 3.9 the lowered copy is
    # what is installed, and that is exactly what the flag lets through.
    return ["--ignore-requires-python"] if version == "3.9" else []


def ensure_venv(project: Project, version: str, source: Path, workdir: Path) -> Path:
    """A venv for ``project`` on CPython ``version`` with its test and build
    dependencies and its own runtime dependencies; reused while they are unchanged."""
    base = find_interpreter(version)
    if base is None:
        raise StepError(f"CPython {version} not found (see tests/interpreters.py)")
    venv = workdir / "venvs" / project.name / f"py{version}"
    python = venv / "bin" / "python"
    # The project is reinstalled (native or lowered) before each run; here it
    # brings its runtime dependencies. On 3.9 it cannot: it requires 3.10, and
    # ignoring requires-python for all would pick dependencies that need 3.10
    # too, so its dependencies are named and resolved for 3.9 instead.
    runtime = runtime_requirements(source) if version == "3.9" else [str(source)]
    wanted = {
        "interpreter": base,
        "requirements": list(project.test_deps) + build_requirements(source) + runtime,
        "source": project.source,
    }
    stamp = venv / "realworld-stamp.json"
    if python.exists() and stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return python
    if venv.exists():
        shutil.rmtree(venv)
    check(run([base, "-m", "venv", str(venv)], timeout=300), f"venv for {version}")
    pip = [str(python), "-m", "pip", "install", "-q"]
    ran = run(pip + wanted["requirements"], env=quiet_env(), timeout=1800)
    if ran.returncode is None or (ran.returncode and _UNREACHABLE.search(ran.output)):
        raise RegistryUnreachable(f"pip install into {venv} failed\n{tail(ran.output)}")
    check(ran, f"pip install into {venv}")
    stamp.write_text(json.dumps(wanted))
    return python


def install_tree(python: Path, tree: Path, version: str) -> None:
    cmd = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall"]
    cmd += ["--no-build-isolation"] + pip_install_flags(version) + [str(tree)]
    check(run(cmd, env=quiet_env(), timeout=900), f"pip install {tree.name}")


# Which files the tests will import: the match statements in them, counted
# where the interpreter has ast.Match (on 3.9 a match would not even import).
_IMPORTED_MATCHES = """
import ast, importlib, os, sys
total = 0
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    top = os.path.dirname(module.__file__)
    for folder, _dirs, files in os.walk(top):
        for file in files:
            if file.endswith(".py") and hasattr(ast, "Match"):
                with open(os.path.join(folder, file), "rb") as handle:
                    tree = ast.parse(handle.read())
                total += sum(isinstance(n, ast.Match) for n in ast.walk(tree))
print(total)
"""


def imported_matches(project: Project, python: Path, tree: Path) -> int:
    """Match statements in the packages ``python`` imports from ``tree``: 0 proves
    a lowered run tests the lowered code, not a native copy found first."""
    cmd = [str(python), "-c", _IMPORTED_MATCHES, *project.modules]
    ran = check(
        run(cmd, cwd=tree, env=quiet_env(dict(project.env)), timeout=300),
        "import check",
    )
    return int(ran.output.strip().splitlines()[-1])


# --- test runs --------------------------------------------------------------------


@dataclass
class Outcomes:
    tests: Dict[str, str] = field(default_factory=dict)  # test id -> outcome
    crashed: str = ""  # why there is no report, when there is none

    def counts(self) -> "Counter[str]":
        return Counter(self.tests.values())

    def summary(self) -> str:
        if self.crashed:
            return "CRASHED"
        c = self.counts()
        return "/".join(str(c[o]) for o in OUTCOMES)


_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def read_junit(path: Path) -> Dict[str, str]:
    tests: Dict[str, str] = {}
    for case in ElementTree.parse(path).iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
        # A test reported twice (a failure, then an error in teardown): the worst.
        previous = tests.get(test_id, "passed")
        tests[test_id] = max(previous, outcome, key=_SEVERITY.__getitem__)
    return tests


def run_tests(project: Project, python: Path, tree: Path, report: Path) -> Outcomes:
    if report.exists():
        report.unlink()
    cmd = [str(python), "-m", "pytest", *project.pytest_args]
    cmd += ["-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit2"]
    cmd += [f"--junitxml={report}"]
    for test_id, _reason in project.deselect:
        cmd += ["--deselect", test_id]
    env = quiet_env(dict(project.env))
    env.setdefault("PYTHONHASHSEED", "0")
    ran = run(cmd, cwd=tree, env=env, timeout=project.timeout)
    if ran.returncode is None:
        return Outcomes(
            crashed=f"timed out after {project.timeout:.0f} s\n{tail(ran.output)}"
        )
    # pytest's exit codes 0 and 1 mean it ran the tests (1: some failed).
    if ran.returncode not in (0, 1) or not report.exists():
        return Outcomes(crashed=f"pytest exit {ran.returncode}\n{tail(ran.output)}")
    return Outcomes(read_junit(report))


def differences(expected: Outcomes, got: Outcomes) -> List[str]:
    if expected.crashed or got.crashed:
        return [f"run crashed: {got.crashed or expected.crashed}"]
    lines = []
    for test_id in sorted(set(expected.tests) | set(got.tests)):
        want = expected.tests.get(test_id, "absent")
        have = got.tests.get(test_id, "absent")
        if want != have:
            lines.append(f"{test_id}: native {want}, lowered {have}")
    return lines


# --- one project ------------------------------------------------------------------


@dataclass
class Row:
    project: str
    python: str
    matches: int
    runs: Dict[str, Outcomes]  # "native" (on 3.9: the oracle's) and each layout
    oracle: str  # the interpreter of the native column
    diffs: Dict[str, List[str]]  # layout -> differences


@dataclass
class ProjectResult:
    project: Project
    rows: List[Row] = field(default_factory=list)
    error: str = ""
    unreachable: bool = False
    skipped: str = ""


def run_project(
    project: Project,
    workdir: Path,
    layouts: Sequence[str],
    pythons: Sequence[str],
    log: Callable[[str], None] = print,
    mirrors: Optional[Path] = None,
) -> ProjectResult:
    result = ProjectResult(project)
    try:
        _run_project(project, workdir, layouts, pythons, result, log, mirrors)
    except SourceUnavailable as error:
        result.skipped = str(error)
    except RegistryUnreachable as error:
        result.error, result.unreachable = str(error), True
    except StepError as error:
        result.error = str(error)
    return result


def _run_project(
    project: Project,
    workdir: Path,
    layouts: Sequence[str],
    pythons: Sequence[str],
    result: ProjectResult,
    log: Callable[[str], None],
    mirrors: Optional[Path],
) -> None:
    log(f"[{project.name}] {project.source}")
    if project.git:
        archive = export_commit(project, workdir, mirrors or default_mirrors())
    else:
        archive = download(project, workdir)
    base = workdir / "trees" / project.name
    source = unpack(archive, base / NATIVE)
    matches = count_matches([source / rel for rel in project.lower])
    trees = {NATIVE: source}
    for layout in layouts:
        trees[layout] = base / layout / source.name
        seconds = lower_tree(project, source, trees[layout], layout)
        log(
            f"[{project.name}] lowered {matches} match statements ({layout}, {seconds:.1f} s)"
        )
    reports = workdir / "reports" / project.name
    reports.mkdir(parents=True, exist_ok=True)
    native: Dict[str, Outcomes] = {}
    for version in project.interpreters(pythons):
        # 3.9 cannot run the native code: its oracle is the first of `pythons`.
        oracle = project.pythons[0] if version == "3.9" else version
        if version == "3.9" and oracle not in native:
            raise StepError(
                f"3.9 needs the native run on {oracle}: add it to --pythons"
            )
        python = ensure_venv(project, version, source, workdir)
        runs: Dict[str, Outcomes] = {}
        variants = list(trees) if version != "3.9" else list(layouts)
        for variant in variants:
            install_tree(python, trees[variant], version)
            found = imported_matches(project, python, trees[variant])
            if version != "3.9" and (found > 0) == (variant != NATIVE):
                raise StepError(
                    f"{version} {variant}: the tests would import code with"
                    f" {found} match statements"
                )
            started = time.monotonic()
            report = reports / f"py{version}-{variant}.xml"
            runs[variant] = run_tests(project, python, trees[variant], report)
            log(
                f"[{project.name}] {version} {variant}: {runs[variant].summary()}"
                f" (passed/failed/skipped/errors, {time.monotonic() - started:.0f} s)"
            )
        if version == "3.9":
            runs[NATIVE] = native[oracle]
        native[version] = runs[NATIVE]
        diffs = {layout: differences(runs[NATIVE], runs[layout]) for layout in layouts}
        result.rows.append(Row(project.name, version, matches, runs, oracle, diffs))


# --- the table ----------------------------------------------------------------------


def table(results: Sequence[ProjectResult], layouts: Sequence[str]) -> str:
    head = ["project", "matches", "python", "native p/f/s/e"]
    head += [f"{layout} p/f/s/e" for layout in layouts] + ["same"]
    body = []
    for result in results:
        if result.skipped:
            body.append(
                [result.project.name, "", "", "skipped"] + [""] * len(layouts) + [""]
            )
            continue
        for row in result.rows:  # those done before an error too
            native = row.runs[NATIVE].summary()
            if row.oracle != row.python:
                native += f" (on {row.oracle})"
            same = all(not row.diffs[layout] for layout in layouts)
            cells = [row.project, str(row.matches), row.python, native]
            cells += [row.runs[layout].summary() for layout in layouts]
            body.append(cells + ["yes" if same else "NO"])
        if result.error:
            body.append(
                [result.project.name, "", "", "ERROR"] + [""] * len(layouts) + ["no"]
            )
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    lines = [
        " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
        for r in [head] + body
    ]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def report_problems(
    results: Sequence[ProjectResult], layouts: Sequence[str]
) -> List[str]:
    out = []
    for result in results:
        if result.skipped:
            out.append(f"{result.project.name}: skipped: {result.skipped}")
        if result.error:
            out.append(f"{result.project.name}: {result.error}")
        for row in result.rows:
            for layout in layouts:
                for line in row.diffs[layout]:
                    out.append(f"{row.project} {row.python} {layout}: {line}")
    return out


def default_workdir() -> Path:
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - platformdirs is a dependency of the tool
        return Path.home() / ".cache" / "spam-transpile-realworld"
    return Path(platformdirs.user_cache_dir("spam-transpile-realworld"))


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--pythons", default="3.9,3.10,3.11")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=None,
        help="folder of fetched repository snapshots (default: $SPAM_TRANSPILE_MIRRORS"
        " or /work/.mirror); projects taken from one are skipped without it",
    )
    parser.add_argument(
        "--table", type=Path, default=TABLE, help="project table (TOML)"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the projects and stop"
    )
    return parser.parse_args(argv)


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    # SystemExit unwinds through run(), which then ends the test suite it started.
    raise SystemExit(128 + signum)


def main(argv: Optional[List[str]] = None) -> int:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    args = parse_args(argv)
    projects = load_projects(args.table)
    if args.only:
        unknown = set(args.only) - {p.name for p in projects}
        if unknown:
            print(f"unknown project(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        projects = [p for p in projects if p.name in args.only]
    if args.list:
        for p in projects:
            where = ", ".join(p.interpreters(["3.9", *p.pythons]))
            print(
                f"{p.name:12} {p.source:28} {where}"
                + (f"  (3.9: {p.py39})" if p.py39 else "")
            )
        return 0
    layouts = [x for x in args.layouts.split(",") if x]
    bad = set(layouts) - set(LAYOUTS)
    if bad:
        print(f"unknown layout(s): {', '.join(sorted(bad))}", file=sys.stderr)
        return 2
    pythons = [x for x in args.pythons.split(",") if x]
    workdir = (args.workdir or default_workdir()).resolve()
    print(f"work folder: {workdir}")
    results = [
        run_project(
            p, workdir, layouts, pythons, lambda m: print(m, flush=True), args.mirrors
        )
        for p in projects
    ]
    print()
    print(table(results, layouts))
    problems = report_problems(results, layouts)
    for line in problems:
        print(line)
    if any(r.error for r in results):
        return 2
    return (
        1
        if any(row.diffs[x] for r in results for row in r.rows for x in layouts)
        else 0
    )


if __name__ == "__main__":
    sys.exit(main())
