"""Transpiled packages against hand-written ones: size, linters, behaviour.

Every package is a folder ``fixtures/packages/NAME/`` with

- ``src/NAME/``: the package as written for Python 3.10, with ``match``;
- ``hand/NAME/``: the same package as a careful person writes it for 3.9;
- ``check.py``: prints what the package does with many inputs, one result a
  line (``python check.py DIR`` imports ``NAME`` from ``DIR``).

For each package and each ``--targets`` version (3.9, 3.8 and 3.7 by
default) the script runs ``python -m spam_transpile src/NAME -o
OUT/TARGET/NAME --layout readable --target TARGET`` (``--layout`` may be
repeated, e.g. ``--layout readable --layout keep-lines``), then measures the
output, the hand-written version and the source alike:

- source lines: non-blank and total, over the package's .py files;
- mypy errors (default settings, no config file). mypy may not accept
  ``--python-version`` TARGET: then the oldest version it accepts is used,
  and the report says so;
- flake8 complaints, default settings (``--isolated``) and with
  ``--max-line-length 88`` (black's length);
- ``black --check`` (no configuration: the repository's skips fixtures/);
- ruff complaints, default rules (``--isolated``), with ``--target-version``
  the version the code is for (3.10 for the source, 3.9 for the hand-written
  version, TARGET for the output);
- behaviour: check.py run on the output with CPython TARGET, and on the
  hand-written version with 3.9, must print exactly what the native source
  prints on 3.10.

The packages use dataclasses, so the targets are 3.7 and newer. Interpreters
are found as scripts/bench.py finds them: ``SPAM_TRANSPILE_PYTHON_3_9``-style
variables, ``python3.9`` on PATH, then pyenv versions.

    python scripts/compare_packages.py                 # plain text
    python scripts/compare_packages.py --markdown
    python scripts/compare_packages.py calc --targets 3.8 --json

Exit status: 0 when every run printed what the native source prints, 1 when
one differs, crashes or cannot be transpiled, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ROOT / "fixtures" / "packages"
DEFAULT_TARGETS = ("3.9", "3.8", "3.7")
LAYOUTS = ("readable", "keep-lines")
NATIVE = "3.10"  # the oldest Python with match: where the source runs
HAND = "3.9"  # what the hand-written versions are written for
TIMEOUT = 600


# --- finding interpreters: as scripts/bench.py does ---------------------------


def find_interpreter(version: str) -> Optional[str]:
    """The path of CPython ``version`` ("3.9"), or None (bench.py's lookup:
    ``SPAM_TRANSPILE_PYTHON_3_9``, then PATH, then pyenv)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from bench import find_interpreter as find
    finally:
        sys.path.pop(0)
    found = find(version)
    return found[0] if found is not None else None


# --- the packages ---------------------------------------------------------------


@dataclass(frozen=True)
class Package:
    name: str
    folder: Path

    @property
    def source(self) -> Path:
        return self.folder / "src" / self.name

    @property
    def hand(self) -> Path:
        return self.folder / "hand" / self.name

    @property
    def check(self) -> Path:
        return self.folder / "check.py"


def find_packages(names: Sequence[str] = ()) -> List[Package]:
    """The packages of fixtures/packages/ (those named, if any names are given)."""
    folders = sorted(PACKAGES.iterdir()) if PACKAGES.is_dir() else []
    found = [
        Package(folder.name, folder)
        for folder in folders
        if (folder / "src" / folder.name / "__init__.py").is_file()
    ]
    if not names:
        return found
    by_name = {package.name: package for package in found}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise SystemExit(
            f"unknown package(s) {', '.join(unknown)}; "
            f"known: {', '.join(by_name) or 'none'}"
        )
    return [by_name[name] for name in names]


def transpile(source: Path, output: Path, target: str, layout: str) -> Optional[str]:
    """Lower the package folder ``source`` into ``output``: None, or the error."""
    command = [
        sys.executable,
        "-m",
        "spam_transpile",
        str(source),
        "-o",
        str(output),
        "--layout",
        layout,
        "--target",
        target,
        "--no-cache",
        "--quiet",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    if result.returncode != 0 or not output.is_dir():
        return (result.stderr or result.stdout).strip() or f"exit {result.returncode}"
    return None


def python_files(folder: Path) -> List[Path]:
    return sorted(path for path in folder.rglob("*.py") if path.is_file())


def count_lines(folder: Path) -> Tuple[int, int]:
    """(non-blank lines, all lines) over the .py files of ``folder``."""
    non_blank = total = 0
    for path in python_files(folder):
        lines = path.read_text(encoding="utf-8").splitlines()
        total += len(lines)
        non_blank += sum(1 for line in lines if line.strip())
    return non_blank, total


# --- the tools ------------------------------------------------------------------


def _tool(
    args: Sequence[str], cwd: Path, env: Optional[Dict[str, str]] = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env=env,
        timeout=TIMEOUT,
    )


def has_module(name: str) -> bool:
    """Whether ``python -m name`` runs here (ruff may not be installed)."""
    try:
        return _tool([name, "--version"], ROOT).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


_MYPY_VERSIONS: Dict[str, Optional[str]] = {}


def mypy_python_version(wanted: str) -> Optional[str]:
    """``wanted``, or the oldest newer version mypy's ``--python-version`` accepts
    (mypy drops old versions), or None when mypy does not run at all."""
    if wanted not in _MYPY_VERSIONS:
        major, minor = (int(part) for part in wanted.split("."))
        accepted = None
        for candidate in range(minor, minor + 10):
            version = f"{major}.{candidate}"
            probe = _tool(
                ["mypy", "--config-file", "", "--python-version", version]
                + ["--cache-dir", os.devnull, "-c", "pass"],
                ROOT,
            )
            if probe.returncode == 0:
                accepted = version
                break
            if "No module named mypy" in probe.stderr:
                break
        _MYPY_VERSIONS[wanted] = accepted
    return _MYPY_VERSIONS[wanted]


@dataclass(frozen=True)
class Verdict:
    """What a tool said: how many complaints (None: the tool failed), its output."""

    count: Optional[int]
    output: str


def _verdict(result: subprocess.CompletedProcess[str], count: Optional[int]) -> Verdict:
    if result.returncode not in (0, 1):
        count = None  # a crash or a usage error, not a verdict on the code
    return Verdict(count, (result.stdout + result.stderr).strip())


def mypy_errors(folder: Path, version: str) -> Verdict:
    """mypy's errors on the package ``folder``, default settings."""
    result = _tool(
        ["mypy", "--config-file", "", "--no-incremental", "--cache-dir", os.devnull]
        + ["--python-version", version, "--hide-error-context", str(folder)],
        folder.parent,
    )
    errors = sum(": error:" in line for line in result.stdout.splitlines())
    if result.returncode == 1 and not errors:
        return _verdict(result, None)
    return _verdict(result, errors)


def flake8_complaints(folder: Path, max_line_length: Optional[int] = None) -> Verdict:
    args = ["flake8", "--isolated"]
    if max_line_length is not None:
        args += ["--max-line-length", str(max_line_length)]
    result = _tool(args + [str(folder)], folder.parent)
    complaints = [line for line in result.stdout.splitlines() if line.strip()]
    return _verdict(result, len(complaints))


def black_reformats(folder: Path, config: Path) -> Verdict:
    """How many files ``black --check`` would reformat (0: it passes)."""
    result = _tool(["black", "--check", "--config", str(config), str(folder)], ROOT)
    if "No Python files are present" in result.stderr:
        return _verdict(result, None)  # excluded: nothing was checked
    lines = result.stderr.splitlines()
    return _verdict(result, sum(line.startswith("would reformat") for line in lines))


def ruff_complaints(folder: Path, target: str) -> Verdict:
    """ruff's complaints, default rules, for Python ``target`` ("3.9")."""
    result = _tool(
        ["ruff", "check", "--no-cache", "--isolated", "--output-format", "json"]
        + ["--target-version", "py" + target.replace(".", ""), str(folder)],
        folder.parent,
    )
    try:
        found = json.loads(result.stdout or "[]")
    except ValueError:
        return _verdict(result, None)
    lines = [
        "%s:%s: %s %s"
        % (item["filename"], item["location"]["row"], item["code"], item["message"])
        for item in found
    ]
    if result.returncode not in (0, 1):
        return Verdict(None, result.stderr.strip())
    return Verdict(len(found), "\n".join(lines))


def run_check(exe: str, check: Path, folder: Path) -> Tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``check.py`` importing from ``folder``."""
    # -I: no PYTHONPATH, user site or script folder on sys.path (check.py
    # puts ``folder`` there); -B: no __pycache__ in the folders compared.
    result = subprocess.run(
        [exe, "-I", "-B", str(check), str(folder)],
        capture_output=True,
        text=True,
        cwd=str(folder),
        timeout=TIMEOUT,
    )
    return result.returncode, result.stdout, result.stderr


def compare_output(expected: str, actual: str) -> Optional[str]:
    """None when equal, else where the two outputs first differ."""
    if expected == actual:
        return None
    want, got = expected.splitlines(), actual.splitlines()
    for number, (one, other) in enumerate(zip(want, got), 1):
        if one != other:
            return f"line {number}: expected {one!r}, got {other!r}"
    return f"{len(want)} lines expected, {len(got)} printed"


# --- measuring ------------------------------------------------------------------


@dataclass
class Row:
    package: str
    variant: str  # source, hand or transpiled
    target: str  # the version the code is for
    layout: str = ""  # transpiled only
    lines: int = 0  # non-blank
    total_lines: int = 0
    mypy: Optional[int] = None
    mypy_python_version: Optional[str] = None
    flake8: Optional[int] = None
    flake8_88: Optional[int] = None
    black: Optional[int] = None  # files black would reformat
    ruff: Optional[int] = None
    interpreter: str = ""  # the version check.py ran on
    behaviour: str = "not run"  # native, same, differs, crashed, not run
    detail: str = ""
    error: str = ""  # transpiling failed

    @property
    def label(self) -> str:
        if self.variant == "transpiled":
            return f"{self.layout} {self.target}"
        return f"{self.variant} ({self.target})"


@dataclass
class Report:
    rows: List[Row] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    interpreters: Dict[str, Optional[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(row.behaviour in ("native", "same") for row in self.rows)


def measure(row: Row, folder: Path, black_config: Path, tools: Dict[str, bool]) -> None:
    row.lines, row.total_lines = count_lines(folder)
    if tools["mypy"]:
        row.mypy_python_version = mypy_python_version(row.target)
        if row.mypy_python_version is not None:
            row.mypy = mypy_errors(folder, row.mypy_python_version).count
    if tools["flake8"]:
        row.flake8 = flake8_complaints(folder).count
        row.flake8_88 = flake8_complaints(folder, 88).count
    if tools["black"]:
        row.black = black_reformats(folder, black_config).count
    if tools["ruff"]:
        row.ruff = ruff_complaints(folder, row.target).count


def run_behaviour(row: Row, package: Package, folder: Path, native: str) -> None:
    """Run check.py on ``folder`` and compare with the native output."""
    exe = find_interpreter(row.interpreter)
    if exe is None:
        row.behaviour, row.detail = "not run", f"no CPython {row.interpreter}"
        return
    status, out, err = run_check(exe, package.check, folder.parent)
    if status != 0:
        row.behaviour = "crashed"
        row.detail = f"exit {status}: " + (err.strip().splitlines() or [""])[-1]
        return
    difference = compare_output(native, out)
    row.behaviour = "same" if difference is None else "differs"
    row.detail = difference or ""


def compare(
    packages: Sequence[Package],
    targets: Sequence[str],
    layouts: Sequence[str],
    work: Path,
    jobs: int,
) -> Report:
    report = Report()
    versions = {NATIVE, HAND, *targets}
    for version in sorted(versions, key=lambda v: tuple(map(int, v.split(".")))):
        report.interpreters[version] = find_interpreter(version)
    tools = {name: has_module(name) for name in ("mypy", "flake8", "black", "ruff")}
    for name, present in tools.items():
        if not present:
            report.notes.append(f"`python -m {name}` does not run here: not measured")
    black_config = work / "black.toml"  # no settings: black's defaults
    black_config.write_text("", encoding="utf-8")

    native_outputs: Dict[str, Optional[str]] = {}
    native_exe = report.interpreters[NATIVE]
    # (row, folder of the package) for every row, measured in parallel below
    plan: List[Tuple[Row, Path, Package]] = []
    for package in packages:
        source = Row(package.name, "source", NATIVE, interpreter=NATIVE)
        plan.append((source, package.source, package))
        native_outputs[package.name] = None
        if native_exe is None:
            source.detail = f"no CPython {NATIVE}"
        else:
            status, out, err = run_check(
                native_exe, package.check, package.source.parent
            )
            if status == 0:
                source.behaviour, native_outputs[package.name] = "native", out
            else:
                source.behaviour = "crashed"
                source.detail = (
                    f"exit {status}: " + (err.strip().splitlines() or [""])[-1]
                )
        plan.append(
            (Row(package.name, "hand", HAND, interpreter=HAND), package.hand, package)
        )
        for layout in layouts:
            for target in targets:
                row = Row(
                    package.name, "transpiled", target, layout, interpreter=target
                )
                output = work / layout / target / package.name
                row.error = transpile(package.source, output, target, layout) or ""
                plan.append((row, output, package))

    def work_on(item: Tuple[Row, Path, Package]) -> None:
        row, folder, package = item
        if row.error:
            row.behaviour = "crashed"
            row.detail = "transpiling failed: " + row.error.splitlines()[-1]
            return
        measure(row, folder, black_config, tools)
        native = native_outputs[package.name]
        if row.variant != "source" and native is not None:
            run_behaviour(row, package, folder, native)
        elif row.variant != "source":
            row.detail = "no native output to compare with"

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(work_on, plan))
    report.rows = [row for row, _, _ in plan]

    used = sorted(
        {
            (row.target, row.mypy_python_version)
            for row in report.rows
            if row.mypy_python_version is not None
            and row.mypy_python_version != row.target
        }
    )
    for wanted, version in used:
        report.notes.append(
            f"mypy does not accept --python-version {wanted}: "
            f"checked with --python-version {version}"
        )
    report.notes.append(
        "ruff: default rules, --target-version the version the code is for"
        f" (source {NATIVE}, hand {HAND}, output its target)"
    )
    report.notes.append(
        f"behaviour: check.py on CPython <target> (hand: {HAND}) against the"
        f" source on {NATIVE}"
    )
    return report


# --- reporting ------------------------------------------------------------------

HEADERS = [
    "package",
    "code",
    "lines (non-blank/total)",
    "mypy",
    "flake8",
    "flake8 88",
    "black",
    "ruff",
    "behaviour",
]


def _count(value: Optional[int]) -> str:
    return "n/a" if value is None else str(value)


def cells(row: Row) -> List[str]:
    if row.error:
        return [row.package, row.label, "-", "-", "-", "-", "-", "-", "not transpiled"]
    mypy = _count(row.mypy)
    if row.mypy is not None and row.mypy_python_version != row.target:
        mypy += f" ({row.mypy_python_version})"
    black = _count(row.black)
    if row.black is not None:
        black = "pass" if row.black == 0 else f"fail ({row.black} files)"
    behaviour = row.behaviour
    if row.behaviour in ("same", "differs", "crashed"):
        behaviour += f" on {row.interpreter}"
    return [
        row.package,
        row.label,
        f"{row.lines}/{row.total_lines}",
        mypy,
        _count(row.flake8),
        _count(row.flake8_88),
        black,
        _count(row.ruff),
        behaviour,
    ]


def render(report: Report, markdown: bool) -> str:
    table = [cells(row) for row in report.rows]
    lines: List[str] = []
    if markdown:
        lines.append("| " + " | ".join(HEADERS) + " |")
        lines.append("| " + " | ".join(["---"] * 2 + ["---:"] * 6 + ["---"]) + " |")
        lines += ["| " + " | ".join(row) + " |" for row in table]
    else:
        widths = [
            max(len(r[i]) for r in [HEADERS] + table) for i in range(len(HEADERS))
        ]
        for row in [HEADERS] + table:
            padded = (cell.ljust(width) for cell, width in zip(row, widths))
            lines.append("  ".join(padded).rstrip())
    lines.append("")
    details = [
        f"{row.package} {row.label}: {row.detail}"
        for row in report.rows
        if row.detail and row.behaviour not in ("same", "native")
    ]
    for note in report.notes + details:
        lines.append(("- " if markdown else "") + note)
    found = ", ".join(
        f"{version}: {exe or 'missing'}" for version, exe in report.interpreters.items()
    )
    lines.append(("- " if markdown else "") + f"interpreters: {found}")
    return "\n".join(lines)


def as_json(report: Report) -> str:
    data = {
        "ok": report.ok,
        "rows": [asdict(row) for row in report.rows],
        "notes": report.notes,
        "interpreters": report.interpreters,
    }
    return json.dumps(data, indent=2)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("packages", nargs="*", help="names under fixtures/packages/")
    parser.add_argument(
        "--targets",
        default=",".join(DEFAULT_TARGETS),
        help="comma-separated target versions [default: %(default)s]",
    )
    parser.add_argument(
        "--layout",
        action="append",
        choices=LAYOUTS,
        help="layout of the output (repeatable) [default: readable]",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--markdown", action="store_true", help="a markdown table")
    output.add_argument("--json", action="store_true", help="JSON, for programs")
    parser.add_argument(
        "--keep", type=Path, help="write the outputs here (kept) instead of a temp dir"
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs"
    )
    args = parser.parse_args(argv)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    bad = [t for t in targets if t not in ("3.7", "3.8", "3.9")]
    if bad or not targets:
        parser.error(
            f"--targets: {', '.join(bad) or 'none given'}; the packages use"
            " dataclasses, so 3.7, 3.8 or 3.9"
        )
    packages = find_packages(args.packages)
    layouts = args.layout or ["readable"]
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = compare(packages, targets, layouts, args.keep.resolve(), args.jobs)
    else:
        with tempfile.TemporaryDirectory(prefix="compare-packages-") as work:
            report = compare(packages, targets, layouts, Path(work), args.jobs)
    if args.json:
        print(as_json(report))
    else:
        print(render(report, args.markdown))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
