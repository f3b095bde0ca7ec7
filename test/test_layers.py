"""The import rule of docs/code_map.md#layers, read with ``ast`` over ``ik_node/**/*.py``.

A *unit* is a package of ``ik_node`` (``compiled``, ``solver``, ...), a module at its root
(``errors``, ``lie``) or the root's ``__init__`` (``ik_node``, the public API). The rule:

1. **Layers.** A unit imports only units of lower layers (:data:`LAYERS`); units of one layer are
   peers and import neither each other nor anything above. Imports inside functions count too.
2. **Exports.** Across units, only what a package's ``__init__`` exports in ``__all__``:
   ``from ik_node.solver import IKSolver``. Where ``__all__`` names a submodule (``compiled``,
   ``decisions`` and ``ros`` export modules: their API is a set of modules), that module may be
   imported and, from it, the names in its own ``__all__`` (its public names if it has none). A package's
   ``__main__`` is its command (``python -m``) and may be imported for its ``main``. No attribute
   named ``_x`` that a class of another unit defines is read (as ``tree._link_location`` was).
3. **ROS.** Only ``ros`` imports rclpy or ROS message packages (:func:`is_ros`): the node's
   decisions (``decisions``, below ``ros``) import none, nor anything that does. Outside ``ros``,
   a module of ``ros`` that imports ROS when it is imported (directly or through the modules it
   imports) is imported only inside a function: the CLI's ``node`` subcommand starts the node
   with ``from ..ros.node import main`` in the function that runs it.
4. **Compiled.** ``compiled`` imports only numpy, math and itself; numba (and llvmlite) only
   through ``compiled/jit.py``, which may also use the standard library (its cache handling).
5. **Shell.** Every module of ``ros`` imports rclpy or a ROS message package, directly or through
   the ``ik_node`` modules it imports (inside functions too), except those :data:`ROS_FREE_SHELL`
   lists with the reason: logic free of ROS belongs in ``decisions``. With rule 3, the folder says
   which is which.

:data:`EXCEPTIONS` lists, with the reason, each import the rule refuses but the package keeps.
"""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ik_node"

#: The layers, lowest first. A unit imports only from the layers below its own.
LAYERS = (
    ("errors", "lie"),  # the exceptions; SE(3) helpers
    ("compiled",),  # the numba kernels over flat arrays (and jit.py, the door to numba)
    ("kinematics",),  # KinematicTree: FK and Jacobians over compiled.spatial
    ("description",),  # URDF/xacro -> Robot (whose tree() is a KinematicTree), package files
    ("collision",),  # collision models, obstacles, SRDF pairs
    ("solver",),  # IKSolver over the kernels (collision rows included)
    ("servo",),  # the streaming servo: twists, jogs and joint goals, one period at a time
    ("reach", "decisions"),  # reachability maps; the node's decisions (policy, schema), no ROS
    ("ros",),  # the ROS 2 node: the rclpy and message shell around the decisions
    ("cli",),  # the ik_node command
    ("ik_node",),  # ik_node/__init__.py, the public API: nothing in the package imports it
)

#: Imports the rule refuses and the package keeps, each with its reason: (module, import) -> why.
EXCEPTIONS = {
    ("ik_node.description.resources", "ament_index_python.packages"): (
        "package:// and $(find PKG) paths in a ROS install: the ament index is files on disk "
        "(no middleware, no rclpy), imported in the functions that look a package up"
    ),
}

#: The modules of ``ros`` that import no ROS (rule 5), each with its reason: module -> why.
ROS_FREE_SHELL = {
    "ik_node.ros": "the package's __init__: says what the shell exports and imports none of it",
    "ik_node.ros.process": (
        "the node started as a process of its own (the demo, tests, benchmarks): the shell's "
        "launcher, which reaches ROS only through the process it runs"
    ),
}

#: Not an exception but a cost the rule allows, written down so it is not a silent hole:
#: importing any name of ik_node runs ik_node/__init__.py, which imports the solver, whose
#: __init__ imports ik_solver and so every kernel module and numba (0.55 s here, numba 0.23 s of
#: it; measured with python -X importtime). So importing the solver's option list (the node's
#: parameter schema, decisions.parameters) imports every kernel. Lazy package __init__s (PEP 562
#: __getattr__) would spare the rclpy-free tools ~0.4 s; not done: the public API's imports stay
#: plain, and the kernels compile lazily on first call, not at import.

#: Top-level packages of ROS 2 (besides any ``*_msgs``, ``*_srvs``, ``*_interfaces``).
ROS_PACKAGES = frozenset(
    {
        "rclpy",
        "rcl_interfaces",
        "builtin_interfaces",
        "tf2_ros",
        "interactive_markers",
        "launch",
        "launch_ros",
    }
)
#: What ``compiled`` imports besides itself; ``compiled/jit.py`` also numba, llvmlite and the
#: standard library.
COMPILED_IMPORTS = frozenset({"__future__", "math", "numpy"})
JIT_IMPORTS = COMPILED_IMPORTS | {"numba", "llvmlite"} | set(sys.stdlib_module_names)
NUMBA = frozenset({"numba", "llvmlite"})


def is_ros(name: str) -> bool:
    """Whether the dotted module ``name`` belongs to ROS 2 (rclpy, message packages, tf2, ...)."""
    top = name.split(".")[0]
    return top in ROS_PACKAGES or top.endswith(("_msgs", "_srvs", "_interfaces"))


def layer_of(unit: str) -> int:
    return next(index for index, layer in enumerate(LAYERS) if unit in layer)


@dataclass(frozen=True)
class Import:
    """One imported module (and the names taken from it) at ``path:line``."""

    path: Path
    line: int
    module: str  # absolute dotted name
    names: tuple[str, ...]  # () for ``import module``
    in_function: bool


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of a module (each file read once a run; the tests never change one after
    reading it)."""
    return ast.parse(path.read_text(), str(path))


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    """The unit of a dotted ``ik_node`` module: its package, root module or ``ik_node``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ik_node"


def read_imports(path: Path, root: Path = PACKAGE) -> list[Import]:
    """Every import of ``path`` (a module of the package at ``root``), relative ones made absolute."""
    tree = parsed(path)
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend(Import(path, child.lineno, alias.name, (), in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                names = tuple(alias.name for alias in child.names)
                found.append(Import(path, child.lineno, module, names, in_function))
            visit(
                child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            )

    visit(tree, False)
    return found


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name."""
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def declared_all(path: Path) -> tuple[str, ...] | None:
    """The names in ``path``'s ``__all__``, or None without one."""
    for statement in parsed(path).body:
        targets = (
            statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
        )
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            return tuple(ast.literal_eval(statement.value))
    return None


def exported(module: str, name: str, known: dict[str, Path]) -> bool:
    """Whether ``from module import name`` takes an export (``module`` of another unit)."""
    path = known[module]
    names = declared_all(path)
    if names is None:
        return not name.startswith("_")
    return name in names


def imported_module(entry: Import, known: dict[str, Path]) -> list[str]:
    """The ``ik_node`` modules that ``entry`` imports (a submodule named in ``from`` included)."""
    found = [entry.module] if entry.module in known else []
    found += [f"{entry.module}.{name}" for name in entry.names if f"{entry.module}.{name}" in known]
    return found


def export_problem(entry: Import, known: dict[str, Path]) -> str | None:
    """Why ``entry`` takes something its unit does not export (it is from another unit), or None."""
    parts = entry.module.split(".")
    if len(parts) < 2:  # from ik_node import ...: the public API, which rule 1 keeps for users
        return None
    package = ".".join(parts[:2])
    if len(parts) == 2:  # from ik_node.<unit> import names / import ik_node.<unit>
        hidden = [name for name in entry.names if not exported(package, name, known)]
        if hidden:
            return f"takes {hidden} from {package}, which exports {list(declared_all(known[package]) or [])}"
        return None
    submodule = parts[2]
    if submodule != "__main__" and not exported(package, submodule, known):
        return (
            f"imports {entry.module}: {package} does not export the module '{submodule}' (it exports "
            f"{list(declared_all(known[package]) or [])}); import from {package}"
        )
    hidden = [name for name in entry.names if f"{entry.module}.{name}" not in known]
    hidden = [name for name in hidden if not exported(".".join(parts[:3]), name, known)]
    if hidden:
        return f"takes {hidden} from {'.'.join(parts[:3])}, which does not export them"
    return None


def ros_bearing(
    known: dict[str, Path], imports: dict[str, list[Import]], in_functions: bool = False
) -> dict[str, str]:
    """The modules whose import imports ROS, each with the ROS module it imports first: directly
    at module level, or through the modules (and their packages' ``__init__``s) they import at
    module level (then the ROS module is the one that module's chain reaches). With
    ``in_functions``, the modules that import ROS anywhere: imports inside functions count too."""
    depends = {}
    for module, entries in imports.items():
        needed = set()
        for entry in entries:
            if entry.in_function and not in_functions:
                continue
            for target in imported_module(entry, known):
                parts = target.split(".")
                needed.update(".".join(parts[:count]) for count in range(1, len(parts) + 1))
        depends[module] = needed - {module}
    bearing = {}
    for module, entries in imports.items():
        direct = [
            entry.module
            for entry in entries
            if is_ros(entry.module) and (in_functions or not entry.in_function)
        ]
        if direct:
            bearing[module] = f"{direct[0]} in {module}"
    while True:
        more = {
            module: bearing[min(needed & bearing.keys())]
            for module, needed in depends.items()
            if module not in bearing and needed & bearing.keys()
        }
        if not more:
            return bearing
        bearing.update(more)


def private_members(path: Path) -> set[str]:
    """The private members (``_x``, not dunder) the classes of a module define: methods, class
    attributes and ``self._x = ...`` (what other units must not read)."""
    names = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(statement.name)
                elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    names.update(target.id for target in targets if isinstance(target, ast.Name))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def shell_problems(known: dict[str, Path], reaching: dict[str, str], root: Path = PACKAGE) -> list[str]:
    """Rule 5: each module of ``ros`` that imports no ROS (``reaching``: the modules that do, inside
    functions too) and is not in :data:`ROS_FREE_SHELL`; each entry there that no longer holds."""
    found = []
    for module, path in known.items():
        where = f"{path.relative_to(root.parent)}:1"
        if unit_of(module) == "ros" and module not in reaching and module not in ROS_FREE_SHELL:
            found.append(
                f"{where}: {module} imports no ROS (rclpy or a message package, directly or through "
                "its imports): logic free of ROS belongs in ik_node.decisions (or, with the reason, "
                "in ROS_FREE_SHELL)"
            )
        elif module in ROS_FREE_SHELL and module in reaching:
            found.append(f"{where}: {module} imports ROS ({reaching[module]}): not one for ROS_FREE_SHELL")
    found += [
        f"ROS_FREE_SHELL lists {module}, which is not a module of ik_node.ros"
        for module in ROS_FREE_SHELL
        if module not in known
    ]
    return found


def violations(root: Path = PACKAGE) -> list[str]:
    """Every breach of the rule in the package at ``root``, as ``path:line: what``."""
    known = modules(root)
    imports = {module: read_imports(path, root) for module, path in known.items()}
    bearing = ros_bearing(known, imports)
    found = shell_problems(known, ros_bearing(known, imports, in_functions=True), root)
    private = {}
    for module, path in known.items():
        private.setdefault(unit_of(module), set()).update(private_members(path))
    for module, entries in imports.items():
        unit = unit_of(module)
        for entry in entries:
            where = f"{entry.path.relative_to(root.parent)}:{entry.line}"
            if (module, entry.module) in EXCEPTIONS:
                continue
            top = entry.module.split(".")[0]
            if top == "ik_node":
                others = {unit_of(target) for target in imported_module(entry, known) or [entry.module]}
                if len(others) > 1:  # from ik_node import <unit>: that unit, not the public API
                    others.discard("ik_node")
                for other in sorted(others - {unit}):
                    if layer_of(other) >= layer_of(unit):
                        found.append(
                            f"{where}: {unit} (layer {layer_of(unit)}) imports {entry.module} "
                            f"({other}, layer {layer_of(other)}): only lower layers"
                        )
                if unit_of(entry.module) != unit and (problem := export_problem(entry, known)):
                    found.append(f"{where}: {problem}")
                if unit != "ros" and not entry.in_function:
                    for target in imported_module(entry, known):
                        if target in bearing and unit_of(target) == "ros":
                            found.append(
                                f"{where}: imports {target} at module level, which imports ROS "
                                f"({bearing[target]}): import it inside the function that needs it"
                            )
            elif is_ros(entry.module) and unit != "ros":
                found.append(f"{where}: {unit} imports {entry.module}: only ik_node.ros imports ROS")
            elif top in NUMBA and module != "ik_node.compiled.jit":
                found.append(f"{where}: imports {entry.module}: numba only through ik_node.compiled.jit")
            elif unit == "compiled":
                allowed = JIT_IMPORTS if module == "ik_node.compiled.jit" else COMPILED_IMPORTS
                if top not in allowed:
                    found.append(f"{where}: compiled imports {entry.module}: only {sorted(COMPILED_IMPORTS)}")
        for node in ast.walk(parsed(known[module])):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and node.attr not in private[unit]
                and any(node.attr in names for names in private.values())
            ):
                found.append(
                    f"{known[module].relative_to(root.parent)}:{node.lineno}: reads {ast.unparse(node)}, "
                    "private to another unit"
                )
    return found


def test_every_unit_has_a_layer_and_every_package_an_all():
    """Each unit is in :data:`LAYERS` once; each package's ``__all__`` names what its
    ``__init__`` binds or its submodules."""
    units = {unit_of(module) for module in modules()}
    listed = [unit for layer in LAYERS for unit in layer]
    assert sorted(units) == sorted(listed)
    for path in PACKAGE.glob("*/__init__.py"):
        names = declared_all(path)
        assert names is not None, f"{path} has no __all__"
        imports = [node for node in ast.walk(parsed(path)) if isinstance(node, ast.ImportFrom)]
        bound = {alias.asname or alias.name for node in imports for alias in node.names}
        unbound = [name for name in names if name not in bound and not (path.parent / f"{name}.py").exists()]
        assert not unbound, f"{path}'s __all__ names {unbound}, neither imported there nor submodules"


def test_imports_follow_the_rule():
    found = violations()
    assert not found, "the import rule (test/test_layers.py) is broken:\n" + "\n".join(found)


def test_the_modules_the_rule_calls_ros_free_import_with_ros_blocked():
    """The rule checked at run time: rclpy and message packages blocked, every module outside
    the ROS-bearing set imports (``__main__`` modules run their command: left out)."""
    known = modules()
    bearing = ros_bearing(known, {module: read_imports(path) for module, path in known.items()})
    free = sorted(module for module in known if module not in bearing and not module.endswith("__main__"))
    decisions = {module for module in known if unit_of(module) == "decisions"}
    assert "ik_node.decisions.policy" in decisions <= set(free) and "ik_node.ros.node" not in free
    code = textwrap.dedent(
        f"""
        import importlib, sys
        class BlockROS:
            def find_spec(self, name, path=None, target=None):
                top = name.split('.')[0]
                if top in {sorted(ROS_PACKAGES)!r} or top.endswith(('_msgs', '_srvs', '_interfaces')):
                    raise ImportError(name + ' is blocked in this test')
        sys.meta_path.insert(0, BlockROS())
        for module in {free!r}:
            importlib.import_module(module)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, cwd=PACKAGE.parent)


#: Wrong lines, each with the module it is added to and what the rule says of it.
WRONG_LINES = [
    ("ros/node_commands.py", "from ..cli import main", "ros (layer 8) imports ik_node.cli (cli, layer 9)"),
    (
        "decisions/motion.py",
        "from ..ros import messages",
        "decisions (layer 7) imports ik_node.ros (ros, layer 8)",
    ),
    (
        "reach/map.py",
        "from ..decisions import policy",
        "reach (layer 7) imports ik_node.decisions (decisions, layer 7)",
    ),
    ("decisions/policy.py", "from ..solver.problem import Problem", "does not export the module 'problem'"),
    ("cli/main.py", "from ..solver import kernels", "takes ['kernels'] from ik_node.solver"),
    ("solver/problem.py", "import rclpy", "solver imports rclpy: only ik_node.ros imports ROS"),
    ("decisions/robot_state.py", "import rclpy", "decisions imports rclpy: only ik_node.ros imports ROS"),
    (
        "decisions/planning.py",
        "def probe(): from sensor_msgs.msg import JointState",  # inside a function too
        "decisions imports sensor_msgs.msg: only ik_node.ros imports ROS",
    ),
    ("ros/poses.py", "import math", "ik_node.ros.poses imports no ROS"),
    (
        "cli/main.py",
        "from ..ros.node import main as node_main",
        "which imports ROS (rclpy in ik_node.ros.node): import it inside",
    ),
    ("compiled/spatial.py", "import scipy", "compiled imports scipy"),
    ("solver/problem.py", "import numba", "numba only through ik_node.compiled.jit"),
    ("reach/map.py", "x = IKSolver._install", "reads IKSolver._install, private"),
]


def test_wrong_imports_are_named(tmp_path):
    """A copy of the package with the wrong lines added (a module that is not there made of its
    line): the rule names each at its line (rclpy in the solver also makes every module that
    imports the solver import ROS: named too)."""
    copy = tmp_path / "ik_node"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    expected = []
    for module, line, message in WRONG_LINES:
        path = copy / module
        lines = path.read_text().splitlines() if path.exists() else []
        path.write_text("\n".join([*lines, line]) + "\n")
        expected.append((f"ik_node/{module}:{len(lines) + 1}: ", message))
    found = violations(copy)
    for where, message in expected:
        assert any(breach.startswith(where) and message in breach for breach in found), (
            where,
            message,
            found,
        )
