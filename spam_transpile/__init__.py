"""spam_transpile: lower Python 3.10 ``match`` statements to code older CPythons run.

Public API: :func:`transpile` (source text in, source text out) and
:class:`TranspileError`.
"""

from typing import TYPE_CHECKING

from spam_transpile.errors import TranspileError, TranspileWarning

if TYPE_CHECKING:  # pragma: no cover
    from spam_transpile.integrations.import_hook import install_import_hook
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
    # Imported on first use: the pipeline imports LibCST, which is slow to
    # import and not needed by a run served from the cache; the import hook
    # imports this package itself (for __version__).
    if name in ("transpile", "transpile_with_warnings"):
        from spam_transpile import pipeline

        return getattr(pipeline, name)
    if name == "install_import_hook":
        from spam_transpile.integrations.import_hook import install_import_hook

        return install_import_hook
    raise AttributeError(f"module 'spam_transpile' has no attribute {name!r}")
