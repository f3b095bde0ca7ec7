"""The package's structural rules inside its packages, read with ``ast`` over ``ik_node/**/*.py``
(test_layers holds the rules between packages):

1. **No import circle**: no module imports, directly or through others, a module that imports it
   (every import counts: at the top, inside a function, under ``TYPE_CHECKING``; a package's
   ``__init__`` counts as the module it is).
2. **No private reads across modules**: an attribute ``x._name`` that another module of the
   package defines (a class's attribute or method, ``self._name = ...``, a module-level name) is
   read only on ``self``/``cls`` or where the module defines ``_name`` too: another module's
   object is used through its public members. (Libraries' private members, numba's cache in
   ``compiled/jit.py`` say, are that module's business; a named tuple's ``_replace`` is public.)
3. **Files a newcomer reads in one sitting**: no module has more than :data:`MAX_LINES` lines
   (a file that grows past it does two jobs: split it by concern).

Each rule is also run on a copy of the package with a wrong line added, which it must name.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ik_node"
#: The most lines a module of the package may have.
MAX_LINES = 600
#: Modules longer than that which the package keeps for now, each with its reason: the rule names
#: any other, and one listed here that is no longer long (its exception left behind).
LONG_MODULES: dict[str, str] = {}  # (none since all_solutions.py's split, issue 51)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def imported_modules(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the package that module ``name`` (at ``path``) imports: ``from . import x``
    names module ``x`` where it is one, else the package; ``from .x import y`` names ``x.y``
    where ``y`` is a module, else ``x``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                for alias in node.names
            ]
        else:
            continue
        found.update(target for target in targets if target in known and target != name)
    return found


def import_circles(root: Path) -> list[list[str]]:
    """Each import circle among the package's modules, as the modules along it (one per strongly
    connected set of modules: Tarjan's algorithm)."""
    known = modules(root)
    graph = {name: sorted(imported_modules(name, path, known)) for name, path in known.items()}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return circles


def defined_private_names(tree: ast.Module) -> set[str]:
    """The ``_names`` a module defines: functions, classes and assignments at any level (class
    attributes, methods, module names), attributes assigned on ``self``/``cls``, ``__slots__``
    entries."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__slots__" for target in node.targets
        ):
            names.update(
                element.value
                for element in ast.walk(node.value)
                if isinstance(element, ast.Constant) and isinstance(element.value, str)
            )
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


#: Members with a leading underscore that are public API (``typing.NamedTuple``'s).
PUBLIC_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make"}
#: Reads the rule refuses and the package keeps: (module, attribute) -> why.
EXCEPTIONS = {
    ("ik_node.compiled.jit", "_cache"): (
        "numba's dispatcher's cache (numba's own private member, of the same name as a cache of "
        "ours): jit.py is the package's one door to numba, and reads it to locate and stamp the cache"
    ),
}


def private_reads(root: Path) -> list[str]:
    """``module:line reads x._name`` for each read of a private attribute that another module of
    the package defines and this one does not, on anything but ``self``/``cls``."""
    trees = {name: ast.parse(path.read_text(), str(path)) for name, path in modules(root).items()}
    defined = {name: defined_private_names(tree) for name, tree in trees.items()}
    found = []
    for name, tree in trees.items():
        own = defined[name]
        elsewhere = set().union(*(names for other, names in defined.items() if other != name))
        for node in ast.walk(tree):
            if (
                not isinstance(node, ast.Attribute)
                or not node.attr.startswith("_")
                or node.attr.startswith("__")
            ):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if (name, node.attr) in EXCEPTIONS or node.attr in PUBLIC_UNDERSCORED:
                continue
            if node.attr in elsewhere and node.attr not in own:
                found.append(f"{name}:{node.lineno} reads {ast.unparse(node)}")
    return found


def test_no_module_imports_a_module_that_imports_it():
    assert import_circles(PACKAGE) == []


def test_no_module_reads_another_modules_private_attributes():
    assert private_reads(PACKAGE) == []


def test_the_rules_name_wrong_lines(tmp_path):
    """A copy of the package with a circle (the problem importing the solver's façade) and a
    private read (the façade's kernel switch read from the batch module): both named."""
    copy = tmp_path / "ik_node"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "solver" / "problem.py").open("a") as problem:
        problem.write("\nfrom . import ik_solver  # noqa\n")
    with (copy / "solver" / "batch.py").open("a") as batch:
        batch.write("\ndef switch_of(solver):\n    return solver._kernel_switch\n")
    assert any(
        "ik_node.solver.problem" in circle and "ik_node.solver.ik_solver" in circle
        for circle in import_circles(copy)
    )
    reads = private_reads(copy)
    assert (
        len(reads) == 1
        and reads[0].startswith("ik_node.solver.batch:")
        and "solver._kernel_switch" in reads[0]
    )


def long_modules(root: Path) -> list[str]:
    """``module: N lines`` for each module of the package longer than :data:`MAX_LINES` and not
    in :data:`LONG_MODULES`, and ``module: N lines, listed as long`` for each listed one that is
    not (any more)."""
    found = []
    for name, path in modules(root).items():
        count = len(path.read_text().splitlines())
        if count > MAX_LINES and name not in LONG_MODULES:
            found.append(f"{name}: {count} lines")
        elif count <= MAX_LINES and name in LONG_MODULES:
            found.append(f"{name}: {count} lines, listed as long")
    return found


def test_no_module_is_longer_than_max_lines():
    assert long_modules(PACKAGE) == []


def test_the_length_rule_names_a_long_module(tmp_path):
    """A copy of the package with a module grown past ``MAX_LINES`` (comment lines appended to
    the kinematics' tree): named, with its length; and each module :data:`LONG_MODULES` lists cut
    to ``MAX_LINES`` lines: named as listed while no longer long. The copy's other modules pass."""
    copy = tmp_path / "ik_node"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tree = copy / "kinematics" / "tree.py"
    count = len(tree.read_text().splitlines())
    with tree.open("a") as module:
        module.write("# a line\n" * (MAX_LINES + 1 - count))
    expected = [f"ik_node.kinematics.tree: {MAX_LINES + 1} lines"]
    for name in LONG_MODULES:
        path = copy.parent.joinpath(*name.split(".")).with_suffix(".py")
        path.write_text("\n".join(path.read_text().splitlines()[:MAX_LINES]) + "\n")
        expected.append(f"{name}: {MAX_LINES} lines, listed as long")
    assert sorted(long_modules(copy)) == sorted(expected)
