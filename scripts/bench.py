"""How fast is lowered code? Native ``match`` on 3.10+ against its lowering.

Runs one program of typical match statements natively on a 3.10+ interpreter
and, transpiled, on the same interpreter and on the targets; prints the
median time per subject for each and the ratio to native on the same
interpreter (side by side, in one run: machines here are noisy).

    python scripts/bench.py [--native 3.12] [--target 3.9 --target 3.8] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from spam_transpile import transpile  # noqa: E402

PROGRAM = """
import sys, time


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


def classify(v):
    match v:
        case 0:
            return "zero"
        case [x, y]:
            return "pair"
        case {"k": k}:
            return "map"
        case Point(x=0, y=y):
            return "on the y axis"
        case Point(x, y):
            return "point"
        case str() | bytes():
            return "text"
        case _:
            return "other"


DATA = [0, [1, 2], (3, 4), {"k": 1}, Point(0, 1), Point(1, 2), "s", b"b", 3.5, None] * 200


def run():
    for v in DATA:
        classify(v)


def main(repeat):
    run()
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        print((time.perf_counter() - start) / len(DATA))


main(int(sys.argv[1]))
"""


def times(python: str, path: Path, repeat: int) -> List[float]:
    out = subprocess.run(
        [python, str(path), str(repeat)], capture_output=True, text=True, check=True
    ).stdout
    return [float(line) for line in out.split()]


def main(argv: Optional[List[str]] = None) -> int:
    from interpreters import find_interpreter

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--native", default="3.12", help="3.10+ interpreter version")
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    native = find_interpreter(args.native)
    if native is None:
        print(f"CPython {args.native} not found")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        original = Path(tmp) / "native.py"
        original.write_text(PROGRAM)
        base = statistics.median(times(native, original, args.repeat))
        print(f"native match on {args.native}: {base * 1e9:8.0f} ns per subject")
        for target in args.target or ["3.9"]:
            lowered = Path(tmp) / f"lowered_{target.replace('.', '_')}.py"
            lowered.write_text(transpile(PROGRAM, target=target))
            same = statistics.median(times(native, lowered, args.repeat))
            print(
                f"lowered for {target}, run on {args.native}: {same * 1e9:8.0f} ns "
                f"per subject ({same / base:.2f}x native)"
            )
            old = find_interpreter(target)
            if old is not None:
                there = statistics.median(times(old, lowered, args.repeat))
                print(
                    f"lowered for {target}, run on {target}: {there * 1e9:8.0f} ns per subject"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
