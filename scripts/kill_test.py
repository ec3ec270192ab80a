"""Kill many runs at random points and tally what was found (issue 10).

The long form of tests/test_kill.py: the same kill points (same seed, so
point N is the same here and in CI), as many as asked, then a count per
mode and per kind of kill, how many left temporary files behind (all of
which the next run must remove), and whether every file stayed whole.

    python scripts/kill_test.py --points 500 [--seed S] [--jobs 2]

Exit status 1 if any point failed; its assertion is printed.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Counter, Dict, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--first", type=int, default=0, help="first point's number")
    parser.add_argument("--seed", help="default: the tests' seed")
    parser.add_argument("--jobs", type=int, default=2, help="points run at once")
    options = parser.parse_args()
    if options.seed is not None:
        os.environ["SPAM_TRANSPILE_KILL_SEED"] = options.seed
    # Imported after the seed is set: the test module reads it on import.
    from tests import test_kill

    with tempfile.TemporaryDirectory(prefix="kill-test-") as scratch:
        trees = test_kill.build_trees(Path(scratch) / "trees")
        indices = range(options.first, options.first + options.points)

        def one(index: int) -> Optional[Dict[str, object]]:
            work = Path(scratch) / f"point-{index}"
            try:
                return test_kill.kill_point(trees, index, work)
            except AssertionError:
                print(f"point {index} FAILED:\n{traceback.format_exc()}", flush=True)
                return None

        with ThreadPoolExecutor(max_workers=options.jobs) as pool:
            results = list(pool.map(one, indices))
    _print_tally(results)
    return 0 if all(result is not None for result in results) else 1


def _print_tally(results: "list[Optional[Dict[str, object]]]") -> None:
    done = [result for result in results if result is not None]
    kinds: Counter[str] = collections.Counter()
    for result in done:
        kinds[f"{result['mode']}, killed at {result['kill']}"] += 1
    print(f"{len(results)} kill points, {len(results) - len(done)} failed")
    for kind, count in sorted(kinds.items()):
        print(f"  {count:5}  {kind}")
    finished = sum(1 for result in done if not result["reached"])
    leftovers = [result for result in done if result["leftovers"]]
    print(f"  {finished} runs ended before their kill point")
    print(
        f"  {len(leftovers)} kills left temporary files "
        f"({sum(int(r['leftovers']) for r in leftovers)} in all); "
        "the next run removed every one"
    )
    partial = sum(1 for result in done if 0 < int(result["new files"]))
    print(f"  {partial} kills came after some outputs were already replaced")
    if len(done) == len(results):
        print("  every file was whole (old or new, byte for byte) after every kill")


if __name__ == "__main__":
    sys.exit(main())
