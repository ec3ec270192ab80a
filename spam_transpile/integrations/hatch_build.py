"""hatchling build hook ``spam-transpile``: wheels whose modules run on older Pythons.

Enabled by a ``[tool.hatch.build.hooks.spam-transpile]`` table in the
project's pyproject.toml and ``spam-transpile`` in ``[build-system]
requires``; hatchling finds the hook through the ``hatch`` entry point group.
Settings come from ``[tool.spam-transpile]``, as for every other entry point
(the target defaults to the oldest Python ``requires-python`` allows); keys
``target``, ``include``, ``exclude`` in the hatch table override it for
hatch builds. The build log says which file and tables were used.

- wheel: every selected module that contains a match statement is lowered
  into a temporary folder and force-included at the original's place in the
  wheel; hatchling then skips the original (its path is reserved). Nothing
  else changes: metadata and dependencies stay the user's.
- sdist: keeps the original sources; the hook only lowers them to check, so
  a broken module fails ``python -m build`` before anything reaches ``dist/``.
- editable wheels point at the sources, so there is nothing to lower; the
  import hook (``python -m spam_transpile.run``) covers that workflow.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl

from spam_transpile.files.config import HATCH_TABLE, load_project
from spam_transpile.integrations import (
    BuildError,
    FileSelector,
    build_settings,
    lower_file_bytes,
    summary,
)

PLUGIN_NAME = "spam-transpile"
CONFIG_TABLE = HATCH_TABLE
OPTIONS = {"target", "include", "exclude"}
# Keys hatchling itself reads from every build hook's table.
HATCHLING_HOOK_OPTIONS = {
    "dependencies",
    "enable-by-default",
    "require-runtime-dependencies",
    "require-runtime-features",
}


class SpamTranspileBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = PLUGIN_NAME

    _work_dir: Optional[str] = None

    def initialize(self, version: str, build_data: Dict[str, Any]) -> None:
        if self.target_name not in ("wheel", "sdist"):
            return
        if self.target_name == "wheel" and version == "editable":
            self.app.display_warning(
                f"{PLUGIN_NAME}: editable wheels use the original sources; "
                "run them on older Pythons with `python -m spam_transpile.run`"
            )
            return
        target, selector = self._options()
        if self.target_name == "sdist":
            self._check_sources(target, selector)
            return
        self._lower_into_wheel(target, selector, build_data)

    def finalize(
        self, version: str, build_data: Dict[str, Any], artifact_path: str
    ) -> None:
        self._remove_work_dir()

    def _options(self) -> Tuple[str, FileSelector]:
        root = Path(self.root)
        unknown = sorted(set(self.config) - OPTIONS - HATCHLING_HOOK_OPTIONS)
        if unknown:
            # A misspelt "exclude" would otherwise lower files silently.
            project = load_project(root / "pyproject.toml")
            raise BuildError(
                project.error(
                    f"unknown option {unknown[0]!r} in [{CONFIG_TABLE}] "
                    f"(known: {', '.join(sorted(OPTIONS))})",
                    unknown[0],
                    CONFIG_TABLE,
                )
            )
        table = {k: v for k, v in self.config.items() if k in OPTIONS}
        settings = build_settings(root, override=table, override_table=CONFIG_TABLE)
        self.app.display_info(f"{PLUGIN_NAME}: {settings.origin}")
        return settings.target, settings.selector

    def _selected_files(self, selector: FileSelector) -> Iterator[Tuple[str, str]]:
        """(absolute path, project-relative path) of each file to lower."""
        builder = self.build_config.builder
        for included in builder.recurse_selected_project_files():
            # Files from outside the project have no relative path to map
            # the lowered copy onto; they are shipped as they are.
            if included.relative_path and selector.selects(included.relative_path):
                yield included.path, included.relative_path

    def _check_sources(self, target: str, selector: FileSelector) -> None:
        for path, relative in self._selected_files(selector):
            lower_file_bytes(_read(path), _display(relative), target)

    def _lower_into_wheel(
        self, target: str, selector: FileSelector, build_data: Dict[str, Any]
    ) -> None:
        self._work_dir = tempfile.mkdtemp(prefix="spam-transpile-")
        # finalize() is skipped when the archive step fails; do not leak then.
        atexit.register(shutil.rmtree, self._work_dir, True)
        lowered = checked = 0
        try:
            for path, relative in self._selected_files(selector):
                checked += 1
                output = lower_file_bytes(_read(path), _display(relative), target)
                if output is None:
                    continue
                copy = os.path.join(self._work_dir, relative)
                _write_like(path, copy, output)
                # The copy lives outside the project root, so hatchling
                # reserves the target path and skips the original file.
                build_data["force_include"][copy] = relative
                lowered += 1
        except BaseException:
            self._remove_work_dir()
            raise
        self.app.display_info(summary(lowered, checked, target))

    def _remove_work_dir(self) -> None:
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            self._work_dir = None


def _display(relative: str) -> str:
    # Errors name files as the user sees them in the project, whatever the OS.
    return relative.replace(os.sep, "/")


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _write_like(original: str, copy: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    with open(copy, "wb") as handle:
        handle.write(data)
    # Keep the permission bits (an executable script stays executable).
    shutil.copymode(original, copy)


@hookimpl
def hatch_register_build_hook() -> type:
    return SpamTranspileBuildHook
