"""spam_transpile: lower Python 3.10 ``match`` statements to code older CPythons run.

Public API: :func:`transpile` (source text in, source text out) and
:class:`TranspileError`.
"""

from spam_transpile.errors import TranspileError
from spam_transpile.pipeline import transpile

__all__ = ["TranspileError", "transpile", "__version__"]
__version__ = "0.1.0"
