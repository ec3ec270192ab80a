"""Rewrite fixtures/cases/*.out.py from the current transpiler output.

Review the result with ``git diff`` before committing; never run in CI.
A case whose output equals its input gets no .out.py file.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spam_transpile import transpile  # noqa: E402

CASES = ROOT / "fixtures" / "cases"


def main() -> int:
    for source in sorted(CASES.glob("*.py")):
        if source.name.endswith(".out.py"):
            continue
        text = source.read_text(encoding="utf-8")
        output = transpile(text, filename=str(source))
        expected = source.with_name(source.stem + ".out.py")
        if output == text:
            expected.unlink(missing_ok=True)
            print(f"identity  {source.name}")
        else:
            expected.write_text(output, encoding="utf-8")
            print(f"rewritten {expected.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
