"""Classes as their declarations describe them, across the project: what the
readable layout trusts, as a reviewer does.

A module's classes (top-level ``class`` statements whose name the module
binds once, and ``namedtuple``/``NamedTuple`` calls assigned once) are
described by their declarations:

- the attributes an instance is taken to have: dataclass and
  ``NamedTuple`` fields, annotated or assigned class attributes, and what
  ``__init__`` assigns to ``self`` unconditionally, with those of the
  module's own base classes;
- ``__match_args__``: a literal one in the body, else the fields of a
  ``NamedTuple``, else a dataclass's (3.10 derives them so), else the one
  the only base with facts has.

A module reaches the classes of other modules of its project through its
own top-level imports (``from .models import Order``, ``from pkg.models
import Order``, ``import pkg.models as m`` with ``case m.Order()``, a
package's ``__init__`` re-exporting a name), each import binding a name the
module binds nowhere else. The project is the folder tree of packages
around the file (the folder above the topmost ``__init__.py``); its modules
are read from disk, never imported. Each file read is remembered with the
digest of its bytes (:meth:`ProjectFacts.consulted`), so a cached output
is used only while those files are unchanged.

The keep-lines layout uses none of this: it stays exact (:mod:`.facts`).
README, Known limits: an object whose declared attribute was deleted, or a
class changed after its body ran, matches differently in the readable
layout than under CPython.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections import Counter
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

from spam_transpile.lowering.facts import (
    KnownClass,
    ModuleFacts,
    binding_counts,
    match_args_set_elsewhere,
    module_facts,
)

__all__ = ["ProjectFacts", "declared_classes"]

#: how many re-exports (``from .models import Order`` in ``__init__.py``)
#: a name is followed through
_HOPS = 4


def declared_classes(
    tree: ast.Module,
    nodes: Optional[List[ast.AST]] = None,
    facts: Optional[ModuleFacts] = None,
    counts: Optional["Counter[str]"] = None,
) -> Dict[str, KnownClass]:
    """The module's classes by name, as their declarations describe them.

    A reviewer trusts a declaration unless the module itself shows it may
    not hold: nothing is trusted where names are bound unseen (a star
    import, a write through ``globals()``); ``__match_args__`` only where
    the exact facts (:mod:`.facts`) find it cannot change, or for a
    ``NamedTuple`` nothing sets it on; attributes a class body annotates
    without a value only where the generated ``__init__`` sets them."""
    # ``nodes``, ``facts``, ``counts``: the module's, when the caller has
    # them at hand (one walk of the tree serves them all)
    nodes = list(ast.walk(tree)) if nodes is None else nodes
    facts = module_facts(tree, nodes) if facts is None else facts
    if facts.unseen is not False:
        return {}
    counts = binding_counts(nodes) if counts is None else counts
    set_elsewhere = match_args_set_elsewhere(nodes)
    named_tuple = _spellings(tree, counts, "typing", "NamedTuple")
    namedtuple = _spellings(tree, counts, "collections", "namedtuple")
    classes: Dict[str, KnownClass] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef) and counts[statement.name] == 1:
            name = statement.name
            exact = facts.known_class(name)
            tuple_fields = _named_tuple_fields(statement, named_tuple)
            match_args = exact.match_args if exact is not None else tuple_fields
            if set_elsewhere is None or name in set_elsewhere:
                match_args = None
            declared = _declared(statement, classes, exact, tuple_fields, match_args)
            if not counts["property"] and (exact or not statement.decorator_list):
                properties = declared.fields + _properties(statement)
                declared = dataclasses.replace(declared, fields=properties)
            if tuple_fields is not None and not statement.decorator_list:
                declared = dataclasses.replace(
                    declared, items=tuple_fields, immutable=tuple_fields
                )
            classes[name] = declared
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and counts[target.id] == 1:
                fields = _tuple_call_fields(statement.value, namedtuple | named_tuple)
                if fields is not None:
                    classes[target.id] = KnownClass(
                        fields, fields, items=fields, immutable=fields
                    )
    return classes


def _declared(
    node: ast.ClassDef,
    earlier: Dict[str, KnownClass],
    exact: Optional[KnownClass],
    tuple_fields: Optional[Tuple[str, ...]],
    match_args: Optional[Tuple[str, ...]],
) -> KnownClass:
    if node.decorator_list and exact is None:
        # a decorator (tagged unions, attrs, ...) may replace what the body
        # declares: descriptors that raise, another class
        return KnownClass(None, ())
    inherited = tuple(
        field
        for base in node.bases
        if isinstance(base, ast.Name) and base.id in earlier
        for field in earlier[base.id].fields
    )
    own = (
        (exact.fields if exact is not None else ())
        + (tuple_fields or ())
        + _class_attributes(node)
        + _set_in_init(node)
    )
    immutable = exact.immutable if exact is not None else ()
    return KnownClass(
        match_args, tuple(dict.fromkeys(inherited + own)), immutable=immutable
    )


def _named_tuple_fields(
    node: ast.ClassDef, spellings: FrozenSet[str]
) -> Optional[Tuple[str, ...]]:
    """The fields of ``class P(NamedTuple)`` with no decorator or keyword
    (its ``__match_args__`` on 3.10, and attributes every instance has)."""
    if node.decorator_list or node.keywords or len(node.bases) != 1:
        return None
    if not _names(node.bases[0], spellings):
        return None
    return tuple(
        s.target.id
        for s in node.body
        if isinstance(s, ast.AnnAssign)
        and isinstance(s.target, ast.Name)
        and "ClassVar" not in ast.unparse(s.annotation)
    )


def _names(node: ast.expr, spellings: FrozenSet[str]) -> bool:
    """Whether ``node`` spells one of ``spellings`` (``NamedTuple`` or
    ``typing.NamedTuple``)."""
    if isinstance(node, ast.Name):
        return node.id in spellings
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and f"{node.value.id}.{node.attr}" in spellings
    )


def _class_attributes(node: ast.ClassDef) -> Tuple[str, ...]:
    """Names the class body gives a plain value (a constant or a display):
    class attributes every instance reads. Not an annotation alone (it sets
    nothing), and not what a call or a name gives, which may be a
    descriptor that raises (``field()``, ``property()``, ``case()``)."""
    found: List[str] = []
    for statement in node.body:
        targets: List[ast.expr]
        if isinstance(statement, ast.AnnAssign):
            targets, value = [statement.target], statement.value
        elif isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        else:
            continue
        if value is not None and _is_plain_value(value):
            found += [t.id for t in targets if isinstance(t, ast.Name)]
    return tuple(found)


def _properties(node: ast.ClassDef) -> Tuple[str, ...]:
    """What the class body declares a ``@property`` (and nothing else
    binds there): an attribute of every instance, as a reviewer reads it."""
    bound = Counter(
        target.id
        for statement in node.body
        for target in ast.walk(statement)
        if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)
    )
    return tuple(
        statement.name
        for statement in node.body
        if isinstance(statement, ast.FunctionDef)
        and [getattr(d, "id", None) for d in statement.decorator_list] == ["property"]
        and not bound[statement.name]
        and sum(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and s.name == statement.name
            for s in node.body
        )
        == 1
    )


def _is_plain_value(value: ast.expr) -> bool:
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    return isinstance(
        value,
        (ast.Constant, ast.JoinedStr, ast.Tuple, ast.List, ast.Set, ast.Dict),
    )


def _set_in_init(node: ast.ClassDef) -> Tuple[str, ...]:
    """What ``__init__`` assigns to ``self.<name>`` in its own body, before
    anything that may leave it (not inside an ``if`` or a ``try``)."""
    init = next(
        (
            s
            for s in node.body
            if isinstance(s, ast.FunctionDef) and s.name == "__init__"
        ),
        None,
    )
    if init is None or not init.args.args:
        return ()
    this = init.args.args[0].arg
    found: List[str] = []
    for statement in init.body:
        targets: List[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        elif isinstance(statement, ast.Expr):
            continue
        else:
            break  # it may leave (return, raise) or branch from here on
        found += [
            t.attr
            for t in targets
            if isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name)
            and t.value.id == this
        ]
    return tuple(found)


def _tuple_call_fields(
    value: ast.expr, spellings: FrozenSet[str]
) -> Optional[Tuple[str, ...]]:
    """The fields of ``namedtuple("P", "x y")`` or ``NamedTuple("P", [("x",
    int)])``, when they are literals."""
    if not isinstance(value, ast.Call) or not _names(value.func, spellings):
        return None
    if len(value.args) != 2 or any(
        k.arg in ("rename", "module") for k in value.keywords
    ):
        return None
    fields = value.args[1]
    if isinstance(fields, ast.Constant) and isinstance(fields.value, str):
        names = fields.value.replace(",", " ").split()
    elif isinstance(fields, (ast.List, ast.Tuple)):
        names = []
        for item in fields.elts:
            if isinstance(item, (ast.Tuple, ast.List)) and item.elts:
                item = item.elts[0]
            if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
                return None
            names.append(item.value)
    else:
        return None
    if not all(n.isidentifier() and not n.startswith("_") for n in names):
        return None
    return tuple(names)


def _spellings(
    tree: ast.Module, counts: Dict[str, int], module: str, name: str
) -> FrozenSet[str]:
    """How the module spells ``module.name``: ``name`` after ``from module
    import name``, ``module.name`` after ``import module``."""
    found = set()
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == module:
            for alias in statement.names:
                if alias.name == name and counts.get(alias.asname or name) == 1:
                    found.add(alias.asname or name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == module and alias.asname is None:
                    if counts.get(module) == 1:
                        found.add(f"{module}.{name}")
    return frozenset(found)


# -- across modules ------------------------------------------------------------


class _Module:
    """What one file of the project declares, as far as other modules read it."""

    def __init__(self, tree: Optional[ast.Module]) -> None:
        self.classes: Dict[str, KnownClass] = {}
        #: name -> (module, level, name) for a top-level ``from ... import``
        self.imported: Dict[str, Tuple[str, int, str]] = {}
        if tree is None:
            return
        nodes = list(ast.walk(tree))
        counts = binding_counts(nodes)
        self.classes = declared_classes(tree, nodes, counts=counts)
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    local = alias.asname or alias.name
                    if alias.name != "*" and counts[local] == 1:
                        self.imported[local] = (
                            statement.module or "",
                            statement.level,
                            alias.name,
                        )


class ProjectFacts:
    """Reads the modules of a project from disk, once per file and digest."""

    def __init__(self) -> None:
        self._read: Dict[Path, Tuple[str, _Module]] = {}
        #: file -> {path: digest ("" for a file that is not there)} it used
        self._consulted: Dict[str, Dict[str, str]] = {}

    def consulted(self, filename: str) -> Dict[str, str]:
        """The files the facts for ``filename`` came from, with the digest
        of each (``""``: looked for, not there)."""
        return dict(self._consulted.get(filename, {}))

    def note(self, filename: str, consulted: Dict[str, str]) -> None:
        """Record more files the output for ``filename`` relies on."""
        self._consulted.setdefault(filename, {}).update(consulted)

    def imported_classes(
        self, filename: str, tree: ast.Module, counts: "Counter[str]"
    ) -> Dict[str, KnownClass]:
        """The classes of other project modules that ``tree`` (the module in
        ``filename``, whose bindings ``counts`` counts) names through its
        top-level imports, by how it spells them (``Order``, ``m.Order``)."""
        used = self._consulted[filename] = {}
        path = Path(filename)
        if not path.is_file():
            return {}
        root, package = _package_of(path.resolve())
        finder = _Finder(self, root, used)
        found: Dict[str, KnownClass] = {}
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom):
                base = _absolute(statement.module, statement.level, package)
                if base is None:
                    continue
                for alias in statement.names:
                    local = alias.asname or alias.name
                    if alias.name == "*" or counts[local] != 1:
                        continue
                    known = finder.class_in(base, alias.name)
                    if known is not None:
                        found[local] = known
                        continue
                    module = finder.module(
                        f"{base}.{alias.name}" if base else alias.name
                    )
                    if module is not None:
                        for name, cls in module.classes.items():
                            found[f"{local}.{name}"] = cls
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    local = alias.asname or alias.name.partition(".")[0]
                    if counts[local] != 1:
                        continue
                    module = finder.module(alias.name)
                    spelled = alias.asname or alias.name
                    if module is not None:
                        for name, cls in module.classes.items():
                            found[f"{spelled}.{name}"] = cls
        return found

    def read(self, path: Path, used: Dict[str, str]) -> Optional[_Module]:
        try:
            raw = path.read_bytes()
        except OSError:
            used[str(path)] = ""
            return None
        digest = hashlib.sha256(raw).hexdigest()
        used[str(path)] = digest
        kept = self._read.get(path)
        if kept is not None and kept[0] == digest:
            return kept[1]
        try:
            tree: Optional[ast.Module] = ast.parse(raw, str(path))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        module = _Module(tree)
        self._read[path] = (digest, module)
        return module


class _Finder:
    """Finds modules of one project (the folder ``root``) for one file."""

    def __init__(self, project: ProjectFacts, root: Path, used: Dict[str, str]):
        self.project = project
        self.root = root
        self.used = used

    def module(self, name: str) -> Optional[_Module]:
        path = self.locate(name)
        return self.project.read(path, self.used) if path is not None else None

    def locate(self, name: str) -> Optional[Path]:
        for path in _candidates(self.root, name):
            if path.is_file():
                return path
            self.used[str(path)] = ""
        return None

    def class_in(self, module: str, name: str) -> Optional[KnownClass]:
        for _ in range(_HOPS):
            path = self.locate(module)
            found = self.project.read(path, self.used) if path is not None else None
            if path is None or found is None:
                return None
            if name in found.classes:
                return found.classes[name]
            imported = found.imported.get(name)
            if imported is None:
                return None
            # a package's ``__init__`` imports relative to the package itself
            package = (
                module if path.name == "__init__.py" else module.rpartition(".")[0]
            )
            base = _absolute(imported[0], imported[1], package)
            if base is None:
                return None
            module, name = base, imported[2]
        return None


def _candidates(root: Path, name: str) -> Iterator[Path]:
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return
    folder = root.joinpath(*name.split("."))
    yield folder.with_suffix(".py")
    yield folder / "__init__.py"


def _package_of(path: Path) -> Tuple[Path, str]:
    """The project's folder (above the topmost package holding ``path``)
    and the package ``path`` belongs to (dotted; ``""`` for a module at the
    top)."""
    parts: List[str] = []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _absolute(module: Optional[str], level: int, package: str) -> Optional[str]:
    """The absolute name of ``from <level dots><module> import ...`` written
    in ``package``."""
    if not level:
        return module or None
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(base) or None
