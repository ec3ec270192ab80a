"""spam_transpile: lower Python 3.10 ``match`` statements to code older CPythons run.

Public API: :func:`transpile` (source text in, source text out) and
:class:`TranspileError`.
"""

from spam_transpile.errors import TranspileError, TranspileWarning
from spam_transpile.pipeline import transpile, transpile_with_warnings

__all__ = [
    "TranspileError",
    "TranspileWarning",
    "install_import_hook",
    "transpile",
    "transpile_with_warnings",
    "__version__",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Imported lazily: the import hook imports this package (for __version__).
    if name == "install_import_hook":
        from spam_transpile.import_hook import install_import_hook

        return install_import_hook
    raise AttributeError(f"module 'spam_transpile' has no attribute {name!r}")
