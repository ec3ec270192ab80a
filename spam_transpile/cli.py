"""Command line: ``spam-transpile FILE`` prints, ``spam-transpile FILE -o OUT`` writes.

Exit codes: 0 success, 2 a file could not be transpiled (its error printed as
``path:line:col: error: message``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click

from spam_transpile import __version__
from spam_transpile.errors import TranspileError
from spam_transpile.pipeline import transpile
from spam_transpile.settings import PLANNED_TARGETS, SUPPORTED_TARGETS
from spam_transpile.write import encode_output, read_source, write_atomic

EXIT_OK = 0
EXIT_ERROR = 2


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the result to this file instead of standard output.",
)
@click.option(
    "--target",
    type=click.Choice(SUPPORTED_TARGETS + PLANNED_TARGETS),
    default="3.9",
    show_default=True,
    help="Oldest Python version the output must run on.",
)
@click.version_option(__version__, prog_name="spam-transpile")
def main(source: Path, output: Optional[Path], target: str) -> None:
    """Lower the match statements of SOURCE to code older Pythons can run."""
    try:
        src = read_source(source)
        result = transpile(src.text, target=target, filename=str(source))
        if output is None:
            sys.stdout.write(result)
            sys.stdout.flush()
        else:
            if output.exists() and output.resolve() == source.resolve():
                raise TranspileError(
                    "refusing to overwrite the source; use another -o path",
                    filename=str(source),
                )
            write_atomic(output, encode_output(result, src.encoding), src.mode)
    except TranspileError as exc:
        click.echo(exc.format(), err=True)
        sys.exit(EXIT_ERROR)
    except OSError as exc:
        click.echo(f"{output or source}:1:1: error: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_OK)
