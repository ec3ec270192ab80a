"""The ``spam-transpile`` command: files, folders and standard input.

``spam-transpile FILE`` prints the result, ``spam-transpile FILE -o OUT``
writes it, ``spam-transpile DIR -o OUT`` mirrors a folder into a runnable
copy, ``--in-place`` rewrites sources, ``--check`` and ``--diff`` only look.

This module is the command: its options, the project's configuration
(``[tool.spam-transpile]``), and the plan of files to visit
(:mod:`spam_transpile.files.discover`). The run itself, reading each file
once, settling what the caches know and sending the rest to a pool of
worker processes, is :mod:`spam_transpile.files.runner`. Exit codes are in
:mod:`spam_transpile.files.report`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import (
    Any,
    Dict,
    Optional,
    Sequence,
    Tuple,
)

import click
from click.core import ParameterSource

from spam_transpile import __version__
from spam_transpile.files.cache import Cache, options_key
from spam_transpile.files.config import (
    NO_PROJECT,
    ConfigError,
    Project,
    find_project_root,
    find_pyproject,
    load_project,
    resolve_target,
)
from spam_transpile.files.discover import (
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    STDIN,
    Filters,
    Plan,
    UsageProblem,
    make_plan,
)
from spam_transpile.files.report import EXIT_ERROR, Reporter
from spam_transpile.settings import LAYOUTS, SUPPORTED_TARGETS
from spam_transpile.files.statcache import StatCache
from spam_transpile.files.runner import (
    CHECK,
    IN_PLACE,
    PRINT,
    WRITE,
    RunOptions,
    Runner,
)

#: options a [tool.spam-transpile] table may set
CONFIGURABLE = (
    "target",
    "layout",
    "include",
    "exclude",
    "extend_exclude",
    "force_exclude",
    "gitignore",
    "jobs",
    "quiet",
    "verbose",
    "cache",
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write results here: a file for one input file, else a folder that "
    "becomes a runnable mirror of the inputs.",
)
@click.option("-i", "--in-place", is_flag=True, help="Rewrite the given files.")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and list the files that would change.",
)
@click.option("--diff", is_flag=True, help="Write nothing; print a unified diff.")
@click.option(
    "--target",
    type=click.Choice(sorted(SUPPORTED_TARGETS)),
    help="Oldest Python version the output must run on [default: target in "
    "[tool.spam-transpile], else the oldest that [project] requires-python "
    "allows, else 3.9].",
)
@click.option(
    "--layout",
    type=click.Choice(LAYOUTS),
    help="keep-lines: every line keeps its number (default, except with "
    "--in-place and --diff); readable: generated code laid out for people "
    "(default with --in-place, and with --diff, which previews --in-place).",
)
@click.option(
    "--include",
    metavar="GLOB",
    multiple=True,
    default=DEFAULT_INCLUDE,
    show_default=True,
    help="Glob of files to transpile inside folders (repeatable).",
)
@click.option(
    "--exclude",
    metavar="GLOB",
    multiple=True,
    default=DEFAULT_EXCLUDE,
    help="Glob of files and folders to skip (repeatable; replaces the "
    "defaults: .git, virtual environments, build, __pycache__, ...).",
)
@click.option(
    "--extend-exclude",
    multiple=True,
    metavar="GLOB",
    help="Glob to skip on top of --exclude (repeatable).",
)
@click.option(
    "--force-exclude",
    multiple=True,
    metavar="GLOB",
    help="Glob to skip even for files named on the command line (repeatable).",
)
@click.option(
    "--gitignore/--no-gitignore",
    default=True,
    show_default=True,
    help="Skip what .gitignore files (the project root's and below) ignore, "
    "in folders given.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    help="Worker processes [default: all cores].",
)
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Print every file and the settings used."
)
@click.option(
    "--cache/--no-cache",
    default=True,
    show_default=True,
    help="Reuse results for unchanged files (keyed by content, version and target).",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read settings from this TOML file instead of the nearest pyproject.toml.",
)
@click.option(
    "--stdin-filename",
    help="Name for standard input in messages and for finding pyproject.toml.",
)
@click.version_option(__version__, prog_name="spam-transpile")
@click.pass_context
def main(ctx: click.Context, paths: Tuple[str, ...], **options: Any) -> None:
    """Lower the match statements in PATH... to code older Pythons can run.

    PATH may be files, folders, or - for standard input. Exit status: 0 ok,
    1 --check found files to transpile, 2 errors.
    """
    # Before any file is looked at: the stat cache trusts only files last
    # changed well before this moment.
    started_ns = time.time_ns()
    try:
        project = _apply_config(ctx, paths, options)
    except ConfigError as exc:
        click.echo(exc.format(), err=True)
        sys.exit(EXIT_ERROR)
    config_path = project.path
    run_options = _run_options(paths, options)
    reporter = Reporter(
        sys.stderr,
        quiet=options["quiet"],
        verbose=options["verbose"],
        check=options["check"],
        dry_run=run_options.action == CHECK,
    )
    plan = _plan(paths, options, config_path, run_options)
    # The one-file forms (`FILE`, `FILE -o OUT`, `-`) stay as quiet as they
    # always were: the output, or an error, and nothing else.
    one_file = plan.stdin or (len(paths) == 1 and not os.path.isdir(paths[0]))
    reporter.show_summary = not (one_file and run_options.action in (PRINT, WRITE))
    cache = Cache(options_key(run_options.target)) if options["cache"] else None
    stat_cache = _stat_cache(options, run_options, plan, started_ns)
    _describe_settings(reporter, project, options, cache, stat_cache, run_options)
    try:
        Runner(run_options, reporter, cache, stat_cache).run(
            plan, options["stdin_filename"] or "<stdin>"
        )
    except KeyboardInterrupt:
        reporter.error("interrupted; files already written are complete")
        sys.exit(130)
    finally:
        # Also after Ctrl-C: what was recorded is true of the files.
        if stat_cache is not None:
            stat_cache.save()
    sys.exit(reporter.finish())


def _apply_config(
    ctx: click.Context, paths: Sequence[str], options: Dict[str, Any]
) -> Project:
    """Fill options not given on the command line from the configuration file.

    The target is resolved as for every entry point: the command line, else
    the file's ``target``, else the oldest Python ``requires-python`` allows.
    """
    config_path = options["config"]
    if config_path is None:
        anchors = [
            (options["stdin_filename"] or STDIN) if p == STDIN else p for p in paths
        ]
        config_path = find_pyproject(anchors)
    project = load_project(config_path) if config_path is not None else NO_PROJECT
    params = {param.name: param for param in ctx.command.params}
    for name, value in project.settings.items():
        if name == "target":
            continue  # resolved below, with requires-python
        if name == "line_length":
            # read per file where it lays the readable layout out
            # (files/line_length.py), which checks it is a usable length
            continue
        if name not in CONFIGURABLE:
            raise project.error(f"option {name!r} cannot be set in a file", name)
        if _given(ctx, name):
            continue  # the command line wins
        options[name] = _cast(ctx, params[name], project, name, value)
    explicit = options["target"] if _given(ctx, "target") else None
    target = resolve_target(project, explicit=explicit, explicit_from="--target")
    options["target"], options["target_reason"] = target
    return project


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)


def _cast(
    ctx: click.Context, param: click.Parameter, project: Project, name: str, value: Any
) -> Any:
    if param.multiple and isinstance(value, str):
        value = [value]
    try:
        return param.type_cast_value(ctx, value)
    except click.BadParameter as exc:
        raise project.error(f"option {name!r}: {exc.message}", name) from None


def _run_options(paths: Sequence[str], options: Dict[str, Any]) -> RunOptions:
    if not paths:
        raise click.UsageError(
            "give one or more files or folders, or - for standard input"
        )
    if options["in_place"] and options["output"] is not None:
        raise click.UsageError("--in-place and -o/--output cannot be used together")
    looking = options["check"] or options["diff"]
    if looking and (options["in_place"] or options["output"] is not None):
        raise click.UsageError("--check and --diff write nothing; drop -o/--in-place")
    if options["in_place"] and STDIN in paths:
        raise click.UsageError("standard input cannot be rewritten in place")
    if options["output"] is not None:
        action = WRITE
    elif options["in_place"]:
        action = IN_PLACE
    elif looking:
        action = CHECK
    else:
        action = PRINT
        if len(paths) > 1 or any(os.path.isdir(p) for p in paths):
            raise click.UsageError(
                "several files or a folder: choose -o OUT, --in-place, --check or --diff"
            )
    # --diff previews what --in-place would write, as black's --diff does.
    previews = action == IN_PLACE or (action == CHECK and options["diff"])
    layout = options["layout"] or ("readable" if previews else "keep-lines")
    return RunOptions(
        action=action,
        diff=options["diff"],
        target=options["target"],
        layout=layout,
        workers=options["jobs"] or _all_cores(),
    )


def _all_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _plan(
    paths: Sequence[str],
    options: Dict[str, Any],
    config_path: Optional[Path],
    run_options: RunOptions,
) -> Plan:
    if config_path is not None:
        root = config_path.parent.absolute()
    else:
        root = find_project_root([p for p in paths if p != STDIN])
    filters = Filters(
        root=root,
        include=tuple(options["include"]),
        exclude=tuple(options["exclude"]),
        extend_exclude=tuple(options["extend_exclude"]),
        force_exclude=tuple(options["force_exclude"]),
        gitignore=options["gitignore"],
    )
    try:
        return make_plan(
            paths, options["output"], filters, mirror_others=run_options.action == WRITE
        )
    except UsageProblem as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def _stat_cache(
    options: Dict[str, Any], run_options: RunOptions, plan: Plan, started_ns: int
) -> Optional[StatCache]:
    """The stat cache for this run, loaded; None when it cannot vouch for the output."""
    # Printing a result (standard output, --diff) needs the file's text, and
    # standard input has no stat.
    if (
        not options["cache"]
        or plan.stdin
        or run_options.diff
        or run_options.action == PRINT
    ):
        return None
    stat_cache = StatCache.for_run(
        action=run_options.action,
        target=run_options.target,
        layout=run_options.layout,
        output=options["output"],
        started_ns=started_ns,
    )
    stat_cache.load()
    return stat_cache


def _describe_settings(
    reporter: Reporter,
    project: Project,
    given: Dict[str, Any],
    cache: Optional[Cache],
    stat_cache: Optional[StatCache],
    options: RunOptions,
) -> None:
    reporter.note(f"configuration: {project.describe()}")
    reporter.note(f"target {options.target} from {given['target_reason']}")
    reporter.note(f"cache: {cache.directory if cache else 'off'}")
    reporter.note(f"stat cache: {stat_cache.path if stat_cache else 'off'}")
    reporter.note(
        f"target {options.target}, layout {options.layout}, up to {options.workers} workers"
    )
