"""Make the helper modules in tests/ (interpreters, patma_split) importable.

pytest's default import mode already puts this directory on sys.path; this
keeps `import patma_split` working under `--import-mode=importlib` too.
"""

import sys
from pathlib import Path

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)
