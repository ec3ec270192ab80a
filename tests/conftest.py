"""Make test helpers importable both as `tests.interpreters` and as
`interpreters` (the style difftest, patma_split and their users use), under any
pytest import mode and from scripts.
"""

import sys
from pathlib import Path

_TESTS_DIR = Path(__file__).resolve().parent
for _path in (str(_TESTS_DIR.parent), str(_TESTS_DIR)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
