"""Benchmark suite (issue 8): match-heavy programs run natively, lowered and hand-written.

Every program is a pair under ``scripts/bench/``:

- ``fixtures/NAME.py``: Python 3.10 source whose ``match`` statements are the
  point (the folder is called ``fixtures`` because the project's black
  configuration targets 3.9, cannot parse ``match``, and skips ``fixtures/``);
- ``hand/NAME.py``: the same program as a careful person writes it for 3.9.

Both define ``WORKLOAD`` and ``run(n) -> int`` (a checksum over a
deterministic workload). The runner transpiles each program for ``--target``
(keep-lines and readable layouts), then runs, in rounds and round-robin (the
machine is shared and noisy, so every variant sees the same noise and ratios
are taken within a round): native ``match`` on 3.10 and 3.11, the lowered code
on the target, 3.10 and 3.11, the readable output on the target and 3.10, and
the hand-written version on the target, 3.10 and 3.11. Each run is a fresh
process that times loading the module (compile + exec of its body), calls
``run(n)`` once to warm up and to get the checksum, then keeps the best of
``--inner`` timed calls. Medians over rounds are reported, with the output
size of both layouts, module load times, transpile speed against a bare
libcst round trip, and the goals of issue 8.

Every checksum must agree with native ``match``: otherwise (or when a variant
cannot be transpiled or crashes) the exit status is 1.

    python scripts/bench.py                  # full run, several minutes
    python scripts/bench.py --quick          # 2 rounds, for CI
    python scripts/bench.py --repeat 9 --markdown
    python scripts/bench.py --quick --scale 0.01 --program switch
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "scripts" / "bench"
MATCH_DIR = BENCH / "fixtures"
HAND_DIR = BENCH / "hand"

try:
    import spam_transpile
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))
    import spam_transpile
from spam_transpile.settings import SUPPORTED_TARGETS  # noqa: E402

# Runs inside each measured interpreter (3.6+), so: no newer syntax. The module
# is registered in sys.modules because dataclasses look their module up there.
DRIVER = """
import json, sys, time, types

def main():
    path, n, inner = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path, encoding="utf-8") as f:
        source = f.read()
    module = types.ModuleType("bench_program")
    module.__file__ = path
    sys.modules[module.__name__] = module
    exec(compile(source, path, "exec"), module.__dict__)
    checksum = module.run(n)
    times = []
    for _ in range(inner):
        start = time.perf_counter()
        again = module.run(n)
        times.append(time.perf_counter() - start)
        if again != checksum:
            sys.exit("run(%d) gave %r, then %r" % (n, checksum, again))
    print(json.dumps({"checksum": checksum, "time": min(times)}))

main()
"""

# Module load: every variant of one program loaded in one process, in turn,
# ``loads`` times each (best kept): a load takes a millisecond or two, and
# separate processes differ by more than that between them. The first pass is
# not timed: it imports what the modules import (dataclasses, enum, typing),
# which would swamp compile + exec of the body itself. Each load starts from a
# collected heap, as an import does, not amid the garbage of the loads before.
LOAD_DRIVER = """
import gc, json, sys, time, types

def main():
    loads, paths = int(sys.argv[1]), sys.argv[2:]
    sources = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            sources.append(f.read())
    best = [float("inf")] * len(paths)
    for i in range(loads + 1):
        for j, (path, source) in enumerate(zip(paths, sources)):
            module = types.ModuleType("bench_load_%d_%d" % (i, j))
            module.__file__ = path
            sys.modules[module.__name__] = module
            gc.collect()
            start = time.perf_counter()
            exec(compile(source, path, "exec"), module.__dict__)
            if i:
                best[j] = min(best[j], time.perf_counter() - start)
            del sys.modules[module.__name__]
    print(json.dumps(best))

main()
"""

# A fresh process per round, so the tool's own caches (keyed by source) never
# serve a second round; both contenders are warmed up on another source first.
TRANSPILE_TIMER = """
import json, sys, time
import libcst
import spam_transpile
from pathlib import Path

target, libcst_first, paths = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
sources = [(p, Path(p).read_text(encoding="utf-8")) for p in paths]
warm = "import sys\\n\\n\\ndef f(x):\\n    match x:\\n        case [1, y]:\\n            return y\\n"
spam_transpile.transpile(warm, target=target)
libcst.parse_module(warm).code

def with_libcst():
    start = time.perf_counter()
    for path, source in sources:
        libcst.parse_module(source).code
    return time.perf_counter() - start

def with_tool():
    start = time.perf_counter()
    for path, source in sources:
        spam_transpile.transpile(source, target=target, filename=path)
    return time.perf_counter() - start

if libcst_first:
    a = with_libcst(); b = with_tool()
else:
    b = with_tool(); a = with_libcst()
print(json.dumps({"libcst": a, "tool": b}))
"""

KEEP = "keep-lines"
READABLE = "readable"


@dataclass
class Program:
    name: str
    match_path: Path
    hand_path: Path
    workload: int
    source: str
    hand_source: str
    outputs: Dict[str, str] = field(default_factory=dict)  # layout -> text
    # why a variant failed: "lowered" (could not transpile, so nowhere) or
    # "lowered 3.9" (crashed on that interpreter only)
    errors: Dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    program: str
    variant: str  # native, lowered, readable, hand
    version: str  # interpreter version, "3.10"


@dataclass
class Sample:
    checksum: int
    time: float


# --- finding interpreters -------------------------------------------------------


def pyenv_root() -> Optional[Path]:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    exe = shutil.which("pyenv")
    if exe:
        try:
            out = subprocess.run(
                [exe, "root"], capture_output=True, text=True, timeout=20
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
        return Path(out) if out else None
    default = Path.home() / ".pyenv"
    return default if default.is_dir() else None


def interpreter_version(exe: str) -> Optional[str]:
    """The full version ("3.10.13") the binary reports, or None if it does not run."""
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


def find_interpreter(version: str) -> Optional[Tuple[str, str]]:
    """(path, full version) of CPython ``version``, looked up as tests/interpreters.py does.

    ``SPAM_TRANSPILE_PYTHON_3_9``-style variables, then ``python3.9`` on PATH,
    then pyenv versions; the binary is asked for its version because pyenv
    shims on PATH may run another one. (Not imported from tests/: that module
    needs pytest.)
    """
    candidates: List[str] = []
    from_env = os.environ.get("SPAM_TRANSPILE_PYTHON_" + version.replace(".", "_"))
    if from_env:
        candidates.append(from_env)
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(on_path)
    root = pyenv_root()
    if root is not None:
        for folder in sorted((root / "versions").glob(f"{version}*"), reverse=True):
            binary = folder / "bin" / f"python{version}"
            if binary.exists():
                candidates.append(str(binary))
    for exe in candidates:
        full = interpreter_version(exe)
        if full is not None and full.rsplit(".", 1)[0] == version:
            return exe, full
    return None


# --- programs and their lowered versions ---------------------------------------


def workload_of(source: str, path: Path) -> int:
    """The module's ``WORKLOAD = <int>``, read without running the module."""
    for node in ast.parse(source, str(path)).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "WORKLOAD"
        ):
            value = ast.literal_eval(node.value)
            if isinstance(value, int):
                return value
    raise SystemExit(f"{path}: no `WORKLOAD = <int>` at module level")


def load_programs(selected: Sequence[str]) -> List[Program]:
    programs = []
    for match_path in sorted(MATCH_DIR.glob("*.py")):
        name = match_path.stem
        if selected and name not in selected:
            continue
        hand_path = HAND_DIR / match_path.name
        if not hand_path.exists():
            raise SystemExit(f"{match_path}: no hand-written version at {hand_path}")
        source = match_path.read_text(encoding="utf-8")
        hand_source = hand_path.read_text(encoding="utf-8")
        workload = workload_of(source, match_path)
        if workload_of(hand_source, hand_path) != workload:
            raise SystemExit(f"{name}: WORKLOAD differs between the two versions")
        programs.append(
            Program(name, match_path, hand_path, workload, source, hand_source)
        )
    missing = set(selected) - {p.name for p in programs}
    if missing:
        raise SystemExit(f"unknown program(s): {', '.join(sorted(missing))}")
    return programs


def readable_lowering() -> Tuple[str, Callable[[str, str, str], str]]:
    """How the readable layout is made: ``transpile(..., layout="readable")``."""

    def by_keyword(source: str, target: str, filename: str) -> str:
        return spam_transpile.transpile(
            source, target=target, filename=filename, layout=READABLE
        )

    return "transpile(..., layout='readable')", by_keyword


def lower_all(
    programs: List[Program], target: str, readable: Callable[[str, str, str], str]
) -> None:
    for program in programs:
        filename = str(program.match_path.relative_to(ROOT))
        lowerers: Dict[str, Callable[[str, str, str], str]] = {
            KEEP: lambda s, t, f: spam_transpile.transpile(s, target=t, filename=f),
            READABLE: readable,
        }
        for layout, lower in lowerers.items():
            try:
                program.outputs[layout] = lower(program.source, target, filename)
            except Exception as error:  # the lowering may be mid-rewrite: report, go on
                variant = "lowered" if layout == KEEP else "readable"
                program.errors[variant] = (
                    f"transpile failed: {type(error).__name__}: {error}"
                )


# --- measuring ------------------------------------------------------------------


def run_job(exe: str, path: Path, n: int, inner: int) -> Tuple[Optional[Sample], str]:
    result, why = _run_driver(
        [exe, "-I", "-S", "-c", DRIVER, str(path), str(n), str(inner)]
    )
    if result is None:
        return None, why
    return Sample(int(result["checksum"]), result["time"]), ""


def measure_loads(exe: str, paths: List[Path], loads: int) -> Optional[List[float]]:
    """Best compile + exec time of each of ``paths``, loaded in one process."""
    command = [exe, "-I", "-S", "-c", LOAD_DRIVER, str(loads), *map(str, paths)]
    result, _ = _run_driver(command)
    return result


def _run_driver(command: List[str]) -> Tuple[Any, str]:
    """The JSON a driver prints last, or None and why not."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "timed out after 600 s"
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        # The last traceback line says what went wrong; the whole thing can be
        # one 10,000-character generated line, so keep it short.
        last = lines[-1] if lines else f"exit status {done.returncode}"
        return None, last[:300]
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


def measure_transpile_speed(
    programs: List[Program], target: str, rounds: int
) -> Tuple[List[float], List[float], str]:
    """Per round: seconds for the tool and for libcst over all match sources."""
    paths = [str(p.match_path) for p in programs]
    tool: List[float] = []
    libcst_times: List[float] = []
    for index in range(rounds):
        done = subprocess.run(
            [sys.executable, "-c", TRANSPILE_TIMER, target, str(index % 2), *paths],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            return tool, libcst_times, (lines[-1] if lines else "failed")[:300]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        tool.append(result["tool"])
        libcst_times.append(result["libcst"])
    return tool, libcst_times, ""


# --- report ---------------------------------------------------------------------


def geomean(values: Sequence[float]) -> Optional[float]:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fmt(value: Optional[float], digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def render(
    title: str, headers: List[str], rows: List[List[str]], markdown: bool
) -> str:
    if markdown:
        lines = [f"**{title}**", ""]
        lines.append("| " + " | ".join(headers) + " |")
        lines.append("| --- |" + " ---: |" * (len(headers) - 1))
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]

    def line(cells: List[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])

    rule = "-" * len(line(headers))
    return "\n".join([title, rule, line(headers), rule, *map(line, rows), ""])


def sizes(source: str, output: str) -> Tuple[float, float, int]:
    """bytes ÷ input bytes, lines ÷ input lines, longest line in characters."""
    lines = output.splitlines()
    return (
        len(output.encode()) / len(source.encode()),
        len(lines) / len(source.splitlines()),
        max((len(line) for line in lines), default=0),
    )


def size_cells(source: str, output: Optional[str]) -> List[str]:
    if output is None:
        return ["n/a"] * 3
    ratio_bytes, ratio_lines, longest = sizes(source, output)
    return [f"{ratio_bytes:.2f}", f"{ratio_lines:.2f}", f"{longest:,}"]


class Results:
    """Samples per job and round; ratios are taken within a round, then medians."""

    def __init__(self) -> None:
        self.samples: Dict[Job, List[Optional[Sample]]] = {}
        #: per round: a native job's load in seconds, another's ÷ native's
        #: (the two loaded in the same process)
        self.loads: Dict[Job, List[float]] = {}

    def add(self, job: Job, sample: Optional[Sample]) -> None:
        self.samples.setdefault(job, []).append(sample)

    def median(self, job: Job, what: str = "time") -> Optional[float]:
        values = [getattr(s, what) for s in self.samples.get(job, []) if s]
        return statistics.median(values) if values else None

    def ratio(self, job: Job, base: Job, what: str = "time") -> Optional[float]:
        pairs = zip(self.samples.get(job, []), self.samples.get(base, []))
        values = [getattr(a, what) / getattr(b, what) for a, b in pairs if a and b]
        return statistics.median(values) if values else None


@dataclass
class Settings:
    target: str
    natives: List[str]  # the first is the baseline
    rounds: int
    inner: int
    loads: int
    scale: float
    markdown: bool
    interpreters: Dict[str, Tuple[str, str]]  # version -> (path, full version)

    @property
    def base(self) -> str:
        return self.natives[0]

    def plan(self) -> List[Tuple[str, List[str]]]:
        """Which variant runs where: lowered and hand-written code on the target
        and the natives, the readable layout on the target and the baseline."""
        everywhere = list(dict.fromkeys([self.target, *self.natives]))
        plan = [
            ("native", self.natives),
            ("lowered", everywhere),
            ("readable", list(dict.fromkeys([self.target, self.base]))),
            ("hand", everywhere),
        ]
        return [(v, [x for x in where if x in self.interpreters]) for v, where in plan]

    def n(self, program: Program) -> int:
        return max(1, round(program.workload * self.scale))


def run_rounds(programs: List[Program], settings: Settings) -> Results:
    jobs = [
        Job(p.name, variant, version)
        for p in programs
        for variant, where in settings.plan()
        for version in where
    ]
    by_name = {p.name: p for p in programs}
    results = Results()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="spam-bench-") as tmp:
        paths: Dict[Tuple[str, str], Path] = {}
        for p in programs:
            texts = {
                "native": p.source,
                "hand": p.hand_source,
                "lowered": p.outputs.get(KEEP),
                "readable": p.outputs.get(READABLE),
            }
            for variant, text in texts.items():
                if text is not None:
                    path = Path(tmp) / variant / f"{p.name}.py"
                    path.parent.mkdir(exist_ok=True)
                    path.write_text(text, encoding="utf-8")
                    paths[p.name, variant] = path
        for index in range(settings.rounds):
            # Alternate the direction so a drift in machine load evens out.
            for job in jobs if index % 2 == 0 else jobs[::-1]:
                program = by_name[job.program]
                where = f"{job.variant} {job.version}"
                if job.variant in program.errors or where in program.errors:
                    continue  # failed before: once is enough to report
                sample, why = run_job(
                    settings.interpreters[job.version][0],
                    paths[job.program, job.variant],
                    settings.n(program),
                    settings.inner,
                )
                if sample is None:
                    program.errors[where] = why
                results.add(job, sample)
            for program in programs:
                load_round(program, paths, settings, results)
            elapsed = time.perf_counter() - started
            print(
                f"round {index + 1}/{settings.rounds} done ({elapsed:.0f} s)",
                file=sys.stderr,
            )
    return results


def load_round(
    program: Program,
    paths: Dict[Tuple[str, str], Path],
    settings: Settings,
    results: Results,
) -> None:
    """One round of module loads of ``program``: on each native interpreter,
    native ``match`` and every variant that runs there, in one process."""
    for version in settings.natives:
        if version not in settings.interpreters:
            continue
        variants = [
            variant
            for variant, where in settings.plan()
            if version in where and (program.name, variant) in paths
        ]
        if "native" not in variants:
            continue
        variants.remove("native")
        variants.insert(0, "native")
        best = measure_loads(
            settings.interpreters[version][0],
            [paths[program.name, v] for v in variants],
            settings.loads,
        )
        if best is None:
            continue  # the run jobs report what fails
        native = best[0]
        for variant, seconds in zip(variants, best):
            value = seconds if variant == "native" else seconds / native
            results.loads.setdefault(Job(program.name, variant, version), []).append(
                value
            )


def checksum_mismatches(
    programs: List[Program], results: Results, base: str
) -> List[str]:
    """Every sample of every variant against native ``match`` on the baseline."""
    mismatches = []
    for p in programs:
        native = results.samples.get(Job(p.name, "native", base), [])
        reference = next((s.checksum for s in native if s), None)
        if reference is None:
            continue  # native itself failed: listed with the failures
        for job, samples in results.samples.items():
            wrong = [s.checksum for s in samples if s and s.checksum != reference]
            if job.program == p.name and wrong:
                mismatches.append(
                    f"{p.name}: {job.variant} on {job.version} gave {wrong[0]}, "
                    f"native {base} gave {reference}"
                )
    return mismatches


# --- the report: one function per table -----------------------------------------


def ratio_columns(settings: Settings) -> List[Tuple[str, str, str, str]]:
    """(label, variant, version, native version it is divided by): code run on
    a newer native (3.11) is compared with native match on that one, the rest
    with the baseline (3.10)."""
    base, target = settings.base, settings.target
    others = settings.natives[1:]
    columns = [
        (f"lowered {base}", "lowered", base, base),
        (f"lowered {target}", "lowered", target, base),
        *[(f"lowered {v} / nat {v}", "lowered", v, v) for v in others],
        (f"readable {base}", "readable", base, base),
        (f"hand {base}", "hand", base, base),
        (f"hand {target}", "hand", target, base),
        *[(f"hand {v} / nat {v}", "hand", v, v) for v in others],
    ]
    present = settings.interpreters
    return [c for c in dict.fromkeys(columns) if c[2] in present and c[3] in present]


def time_tables(
    programs: List[Program], results: Results, settings: Settings
) -> Tuple[str, Dict[str, List[Optional[float]]]]:
    columns = [(v, ver) for v, where in settings.plan() for ver in where]
    rows = []
    for p in programs:
        medians = [results.median(Job(p.name, v, ver)) for v, ver in columns]
        rows.append(
            [p.name, f"{settings.n(p):,}"]
            + [fmt(None if m is None else m * 1e3, 1) for m in medians]
        )
    text = render(
        "Run time, ms per run(n) (median)",
        ["program", "n"] + [f"{v} {ver}" for v, ver in columns],
        rows,
        settings.markdown,
    )
    ratios: Dict[str, List[Optional[float]]] = {}
    rows = [[p.name] for p in programs]
    for label, variant, version, base in ratio_columns(settings):
        ratios[label] = [
            results.ratio(Job(p.name, variant, version), Job(p.name, "native", base))
            for p in programs
        ]
        for row, value in zip(rows, ratios[label]):
            row.append(fmt(value))
    rows.append(
        ["geometric mean"] + [fmt(geomean(complete(r))) for r in ratios.values()]
    )
    text += "\n" + render(
        f"Time ÷ native {settings.base} (ratio within each round, median; "
        f"'/ nat X': ÷ native X)",
        ["program"] + list(ratios),
        rows,
        settings.markdown,
    )
    return text, ratios


def complete(values: List[Optional[float]]) -> List[float]:
    """All values, or none: a mean over some of the programs would flatter."""
    if None in values:
        return []
    return [v for v in values if v is not None]


def size_table(programs: List[Program], markdown: bool) -> Tuple[str, Dict[str, str]]:
    """Per program and in all; also returns the concatenated texts per layout
    (only layouts that every program has)."""
    kinds = {KEEP: "keep", READABLE: "readable", "hand": "hand"}
    rows = []
    for p in programs:
        texts = {KEEP: p.outputs.get(KEEP), READABLE: p.outputs.get(READABLE)}
        texts["hand"] = p.hand_source
        row = [p.name, f"{len(p.source.encode()):,}", f"{len(p.source.splitlines()):,}"]
        for kind in kinds:
            row += size_cells(p.source, texts[kind])
        rows.append(row)
    source = "".join(p.source for p in programs)
    joined: Dict[str, str] = {"source": source}
    outputs: Dict[str, List[Optional[str]]] = {
        kind: [p.outputs.get(kind) for p in programs] for kind in (KEEP, READABLE)
    }
    outputs["hand"] = [p.hand_source for p in programs]
    row = ["all", f"{len(source.encode()):,}", f"{len(source.splitlines()):,}"]
    for kind, parts in outputs.items():
        if None not in parts:
            joined[kind] = "".join(t for t in parts if t is not None)
        row += size_cells(source, joined.get(kind))
    rows.append(row)
    headers = ["program", "bytes", "lines"] + [
        f"{label} {what}"
        for label in kinds.values()
        for what in ("bytes×", "lines×", "longest")
    ]
    title = "Output size ÷ the match source; longest line in characters"
    return render(title, headers, rows, markdown), joined


def target_size_table(programs: List[Program], markdown: bool) -> str:
    """Keep-lines output of all programs for each target, ÷ the source."""
    source = "".join(p.source for p in programs)
    rows = []
    # newest first: older targets store captures without ``:=``
    for target in sorted(SUPPORTED_TARGETS, reverse=True):
        try:
            output = "".join(
                spam_transpile.transpile(
                    p.source, target=target, filename=p.match_path.name
                )
                for p in programs
            )
        except Exception as error:  # report it in the table, go on
            rows.append([target, f"failed: {type(error).__name__}", "", ""])
            continue
        rows.append([target, *size_cells(source, output)])
    headers = ["target", "keep bytes×", "keep lines×", "keep longest"]
    title = "Keep-lines output of all programs by target (3.7 and 3.6 have no :=)"
    return render(title, headers, rows, markdown)


def load_table(
    programs: List[Program], results: Results, settings: Settings
) -> Tuple[str, Dict[str, List[float]]]:
    """Compile + exec of the module body, ÷ native on the same interpreter."""
    ratios: Dict[str, List[float]] = {"lowered": [], "readable": [], "hand": []}
    headers = ["program"]
    columns: List[Tuple[str, str]] = []
    for version in settings.natives:
        if version not in settings.interpreters:
            continue
        headers.append(f"native {version} µs")
        columns.append(("native", version))
        for variant in ratios:
            if any(Job(p.name, variant, version) in results.loads for p in programs):
                headers.append(f"{variant} {version} ×")
                columns.append((variant, version))
    rows = []
    for p in programs:
        row = [p.name]
        for variant, version in columns:
            found = results.loads.get(Job(p.name, variant, version))
            value = statistics.median(found) if found else None
            if variant == "native":
                row.append(fmt(None if value is None else value * 1e6, 0))
                continue
            row.append(fmt(value))
            if value is not None:
                ratios[variant].append(value)
        rows.append(row)
    title = (
        "Module load (compile + exec of the body; each variant ÷ native, loaded "
        "in turn in one process per round; medians)"
    )
    return render(title, headers, rows, settings.markdown), ratios


def speed_table(
    programs: List[Program], settings: Settings, rounds: int
) -> Tuple[str, Optional[float]]:
    tool_times, libcst_times, error = measure_transpile_speed(
        programs, settings.target, rounds
    )
    if not tool_times:
        return f"transpile speed not measured: {error}\n", None
    tool_s = statistics.median(tool_times)
    libcst_s = statistics.median(libcst_times)
    # as for run times: the ratio within each round (both contenders met the
    # same load), then the median of those
    speed = statistics.median(lib / tool for tool, lib in zip(tool_times, libcst_times))
    lines = sum(len(p.source.splitlines()) for p in programs)
    row = [
        f"{len(programs)} files",
        f"{lines:,}",
        fmt(tool_s, 3),
        fmt(libcst_s, 3),
        fmt(speed),
    ]
    headers = ["tree", "lines", "transpile s", "libcst parse+print s", "speed ÷ libcst"]
    title = (
        f"Transpile speed, the match sources for {settings.target} "
        f"({len(tool_times)} rounds, a fresh process each; seconds: medians; "
        "speed: median of the ratios within each round)"
    )
    return render(title, headers, [row], settings.markdown), speed


def goals_table(
    sizes_of: Dict[str, str],
    ratios: Dict[str, List[Optional[float]]],
    loads: Dict[str, List[float]],
    speed: Optional[float],
    settings: Settings,
) -> str:
    """The figures of issue 8's first table and of issue 20's, with their
    goals (issue 20's where both name one) and, as the issues do, what the
    hand-written versions measure."""

    def size(kind: str, index: int) -> Optional[float]:
        text = sizes_of.get(kind)
        return None if text is None else sizes(sizes_of["source"], text)[index]

    def ratio(
        label: str, summary: Callable[[List[float]], Optional[float]]
    ) -> Optional[float]:
        return summary(complete(ratios.get(label, [None])))

    def worst(values: List[float]) -> Optional[float]:
        return max(values) if values else None

    base, target = settings.base, settings.target
    # (figure, measured, hand-written, goal, digits)
    figures: List[Tuple[str, Optional[float], Optional[float], str, int]] = [
        (
            "keep-lines bytes ÷ input bytes (all)",
            size(KEEP, 0),
            size("hand", 0),
            "≤ 2.0",
            2,
        ),
        ("longest keep-lines line", size(KEEP, 2), size("hand", 2), "≤ 400", 0),
        (
            "readable lines ÷ input lines (all)",
            size(READABLE, 1),
            size("hand", 1),
            "≤ 2.0",
            2,
        ),
        (
            f"lowered on {base} ÷ native {base}, geomean",
            ratio(f"lowered {base}", geomean),
            ratio(f"hand {base}", geomean),
            "≤ 0.5",
            2,
        ),
        (
            f"lowered on {base} ÷ native {base}, worst",
            ratio(f"lowered {base}", worst),
            ratio(f"hand {base}", worst),
            "≤ 0.9",
            2,
        ),
        (
            f"lowered on {target} ÷ native {base}, worst",
            ratio(f"lowered {target}", worst),
            ratio(f"hand {target}", worst),
            "≤ 0.9",
            2,
        ),
        (
            f"lowered on {target} ÷ native {base}, geomean",
            ratio(f"lowered {target}", geomean),
            ratio(f"hand {target}", geomean),
            "≤ 0.55",
            2,
        ),
        (
            f"readable on {base} ÷ native {base}, geomean",
            ratio(f"readable {base}", geomean),
            ratio(f"hand {base}", geomean),
            "≤ 0.65",
            2,
        ),
        (
            "module load lowered ÷ native, worst",
            worst(loads["lowered"]),
            worst(loads["hand"]),
            "≤ 1.3",
            2,
        ),
        ("transpile speed ÷ libcst round trip", speed, None, "≥ 0.5", 2),
    ]
    rows = []
    for name, value, hand, goal, digits in figures:
        relation, bound = goal.split()
        if value is None:
            status = "n/a"
        elif value <= float(bound) if relation == "≤" else value >= float(bound):
            status = "met"
        else:
            status = "NOT met"
        hand_cell = "-" if hand is None else fmt(hand, digits)
        rows.append([name, fmt(value, digits), hand_cell, goal, status])
    headers = ["figure", "measured", "hand-written", "goal", "status"]
    return render("Goals of issues 8 and 20", headers, rows, settings.markdown)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="2 rounds, 1 timed call each (for CI)"
    )
    parser.add_argument("--repeat", type=int, help="rounds (default 5, quick 2)")
    parser.add_argument(
        "--inner", type=int, help="timed calls per process, best kept (default 3)"
    )
    parser.add_argument("--markdown", action="store_true", help="markdown tables")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply each WORKLOAD (tests: 0.01)"
    )
    parser.add_argument(
        "--program", action="append", default=[], help="only NAME (repeatable)"
    )
    parser.add_argument("--target", default="3.9", help="target to lower for (3.9)")
    parser.add_argument(
        "--native",
        action="append",
        default=[],
        help="interpreter for native match, 3.10+ (repeatable; default 3.10 and "
        "3.11; the first is the baseline of the ratios)",
    )
    args = parser.parse_args(argv)
    natives: List[str] = args.native or ["3.10", "3.11"]
    interpreters: Dict[str, Tuple[str, str]] = {}
    for version in dict.fromkeys([args.target, *natives]):
        found = find_interpreter(version)
        if found is None:
            print(f"CPython {version} not found: its columns are left out")
        else:
            interpreters[version] = found
    if natives[0] not in interpreters:
        print(f"no CPython {natives[0]}: nothing to compare against")
        return 2
    settings = Settings(
        target=args.target,
        natives=natives,
        rounds=args.repeat or (2 if args.quick else 5),
        inner=args.inner or (1 if args.quick else 3),
        # Loading takes about a millisecond: best of 60 (the best of 20 read
        # 1.42-1.49 for switch in runs where the best of 200 read 1.40-1.41;
        # the best of 60 read 1.41-1.43). Quick runs only check: load once.
        loads=1 if args.quick else 60,
        scale=args.scale,
        markdown=args.markdown,
        interpreters=interpreters,
    )

    programs = load_programs(args.program)
    how_readable, readable = readable_lowering()
    lower_all(programs, args.target, readable)
    results = run_rounds(programs, settings)
    mismatches = checksum_mismatches(programs, results, settings.base)

    versions = ", ".join(f"{v} = {full}" for v, (_, full) in interpreters.items())
    out = [
        f"spam_transpile {getattr(spam_transpile, '__version__', '?')}, lowered "
        f"for {args.target}; {platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.system()}; CPython {versions}",
        f"{settings.rounds} rounds, round-robin; per process: best of "
        f"{settings.inner} call(s) of run(WORKLOAD x {args.scale:g}); medians over "
        f"rounds; readable layout: {how_readable}",
        "",
    ]
    if settings.markdown:  # two paragraphs, not one
        out.insert(1, "")
    times, ratios = time_tables(programs, results, settings)
    sizes_text, joined = size_table(programs, settings.markdown)
    sizes_text += "\n" + target_size_table(programs, settings.markdown)
    loads_text, load_ratios = load_table(programs, results, settings)
    # one pass over six files takes a fraction of a second, and a load spike
    # on a shared machine moves a round's ratio by a fifth: many rounds
    speed_text, speed = speed_table(programs, settings, 1 if args.quick else 21)
    out += [times, sizes_text, loads_text, speed_text]
    out.append(goals_table(joined, ratios, load_ratios, speed, settings))

    failures = [
        f"{p.name}: {where}: {why}" for p in programs for where, why in p.errors.items()
    ]
    if mismatches or failures:
        out.append("CHECKSUMS DO NOT AGREE" if mismatches else "SOME VARIANTS FAILED")
        out += [f"  {line}" for line in mismatches + failures]
    else:
        count = sum(len(s) for s in results.samples.values())
        out.append(f"checksums agree: {count} runs, {len(programs)} programs")
    print("\n".join(out))
    return 1 if mismatches or failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
