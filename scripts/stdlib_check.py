"""No false rejections: run spam_transpile over a CPython standard library tree.

For every ``.py`` file the tree's own interpreter compiles, the file must
transpile without error; a file without match statements must come back
byte-identical; every output must compile on that same interpreter. Prints
the counts and each problem, exits 1 if there is any.

    python scripts/stdlib_check.py --python 3.12 [--python 3.13 ...] [--only-match] [-j N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spam_transpile import TranspileError, transpile  # noqa: E402
from spam_transpile.syntax.parse import may_hold_match  # noqa: E402
from spam_transpile.files.write import decode_source  # noqa: E402

# Compile each file on the tree's interpreter; print the ones that fail.
_COMPILE_ALL = """
import sys, json, warnings
warnings.simplefilter("ignore")
bad = []
for path in json.load(open(sys.argv[1])):
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
    except Exception as e:
        bad.append([path, "%s: %s" % (type(e).__name__, e)])
json.dump(bad, sys.stdout)
"""


@dataclass
class Counts:
    files: int = 0
    skipped_not_compiling: int = 0
    # Refused, rightly: CPython 3.10, the oldest with match statements, cannot
    # compile them either (PEP 701 f-strings, except*, ...), so no target can.
    refused_newer_syntax: int = 0
    with_match: int = 0
    identical: int = 0
    problems: List[str] = field(default_factory=list)


def stdlib_dir(python: str) -> Path:
    out = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def python_files(tree: Path) -> List[Path]:
    return sorted(p for p in tree.rglob("*.py") if "site-packages" not in p.parts)


def compile_failures(python: str, paths: Iterable[Path]) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([str(p) for p in paths], handle)
    try:
        out = subprocess.run(
            [python, "-c", _COMPILE_ALL, handle.name],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(handle.name)
    return dict(json.loads(out.stdout))


def lower_one(path: str) -> Tuple[str, Optional[str], Optional[str], bool]:
    """(path, output or None, error or None, had_match)."""
    raw = Path(path).read_bytes()
    try:
        source = decode_source(raw, path).text
        output = transpile(source, filename=path)
    except TranspileError as exc:
        return path, None, exc.format(), may_hold_match(raw)
    return path, output, None, output != source


def check_tree(python: str, only_match: bool, jobs: int) -> Counts:
    counts = Counts()
    files = python_files(stdlib_dir(python))
    if only_match:
        files = [p for p in files if may_hold_match(p.read_bytes())]
    not_compiling = compile_failures(python, files)
    counts.skipped_not_compiling = len(not_compiling)
    files = [p for p in files if str(p) not in not_compiling]
    counts.files = len(files)
    changed: List[Tuple[Path, str]] = []
    refused: List[Tuple[str, str]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for path, output, error, differs in pool.map(
            lower_one, map(str, files), chunksize=8
        ):
            if error is not None:
                refused.append((path, error))
            elif differs:
                counts.with_match += 1
                changed.append((Path(path), output or ""))
            else:
                counts.identical += 1
    newer = _newer_than_every_target(refused)
    counts.refused_newer_syntax = len(newer)
    counts.problems += [
        f"false rejection: {error}" for path, error in refused if path not in newer
    ]
    counts.problems += _outputs_compile(python, changed)
    return counts


def _newer_than_every_target(refused: List[Tuple[str, str]]) -> set:
    """The refused files CPython 3.10 cannot compile: their syntax is newer
    than any target's, so refusing them is right."""
    if not refused:
        return set()
    sys.path.insert(0, str(ROOT / "tests"))
    from interpreters import find_interpreter

    oldest = find_interpreter("3.10")
    if oldest is None:
        return set()
    return set(compile_failures(oldest, [Path(path) for path, _ in refused]))


def _outputs_compile(python: str, changed: List[Tuple[Path, str]]) -> List[str]:
    with tempfile.TemporaryDirectory() as tmp:
        written = []
        for i, (path, output) in enumerate(changed):
            target = Path(tmp) / f"{i}_{path.name}"
            target.write_text(output, encoding="utf-8")
            written.append(target)
        failures = compile_failures(python, written)
        return [
            f"output does not compile: {changed[int(Path(p).name.split('_')[0])][0]}: {e}"
            for p, e in failures.items()
        ]


def main(argv: Optional[List[str]] = None) -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    from interpreters import find_interpreter

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", default=[], help="X.Y or a path")
    parser.add_argument(
        "--only-match", action="store_true", help="files that may hold match"
    )
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    failed = False
    for wanted in args.python or ["3.11", "3.12", "3.13"]:
        python = wanted if os.sep in wanted else find_interpreter(wanted)
        if python is None:
            print(f"{wanted}: interpreter not found")
            failed = True
            continue
        counts = check_tree(python, args.only_match, args.jobs)
        print(
            f"{wanted}: {counts.files} files, {len(counts.problems)} problems "
            f"({counts.with_match} with match statements lowered and compiling, "
            f"{counts.identical} byte-identical, "
            f"{counts.skipped_not_compiling} skipped: {wanted} itself refuses them, "
            f"{counts.refused_newer_syntax} refused: syntax newer than every target)"
        )
        for problem in counts.problems:
            print("  " + problem)
        failed = failed or bool(counts.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
