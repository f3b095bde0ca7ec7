"""Every supported ROS 2 distribution (Humble, Jazzy, Kilted, Rolling), checked where only some
of them can be installed.

**Humble's rclpy.** CI runs the node on Kilted's and Jazzy's rclpy wheels; Humble has none on
PyPI. So every module of the package that imports rclpy is read with ``ast`` and compared with
the public API of Humble's rclpy, extracted from its sources (``ros_compat_data.py`` says which
commit). A failure is

* ``self.<name>`` in a class derived from rclpy's ``Node`` (or ``<node>.<name>`` on a node made by
  ``rclpy.create_node``/``Node(...)``) where ``<name>`` is a member of the installed rclpy's Node
  but not of Humble's, and a keyword argument of a Node method (``super().__init__`` included)
  that Humble's signature lacks;
* ``self.get_logger().<name>`` that Humble's logger lacks;
* ``import rclpy.x``, ``from rclpy.x import Y`` or ``rclpy.x.Y`` where Humble has no module ``x``
  or no ``Y`` in it;

unless it is feature-detected: inside ``if hasattr(obj, "name")`` (or a test on a variable
assigned from ``hasattr(...)``/``getattr(obj, "name", None)``, or ``hasattr(...) and ...``),
after ``if not hasattr(obj, "name"): return`` (or raise, continue, break), or inside
``try: ... except AttributeError`` (``ImportError`` for imports).

**rosdep.** ``package.xml``'s keys, with their ``condition`` attributes evaluated, must resolve on
each distribution's Ubuntu (Humble: 22.04 jammy; Jazzy, Kilted, Rolling: 24.04 noble) according to
rosdistro's rules, and to apt packages that exist there.

Regenerate the data from checkouts of ros2/rclpy and ros/rosdistro with
``python test/test_ros_compat.py RCLPY_GIT_DIR ROSDISTRO_GIT_DIR``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
DATA_FILE = Path(__file__).with_name("ros_compat_data.py")

#: Ubuntu release each distribution's apt packages are built for (REP 2000).
UBUNTU = {"humble": "jammy", "jazzy": "noble", "kilted": "noble", "rolling": "noble"}
#: Apt packages a rosdep rule names that the Ubuntu release does not have (rosdistro cannot tell):
#: measured here, see /work/shared/DESIGN.md ("Ubuntu 24.04 has no such apt package").
APT_MISSING = {"noble": {"python3-numba"}}

#: Where a module name says a node class comes from.
NODE_CLASSES = {("rclpy.node", "Node"), ("rclpy.lifecycle", "Node"), ("rclpy.lifecycle", "LifecycleNode")}
NODE_FACTORIES = {("rclpy", "create_node")}
EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


# --- the scanner ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


class HumbleScan:
    """Uses of rclpy in one module that Humble's rclpy does not have (``findings``)."""

    def __init__(self, source: str, path: str, installed_node: set[str], humble):
        self.path = path
        self.installed_node = installed_node
        self.modules: dict[str, list[str]] = humble.HUMBLE_MODULES
        self.node: dict[str, str | None] = humble.HUMBLE_NODE
        self.logger: list[str] = humble.HUMBLE_LOGGER
        self.tree = ast.parse(source)
        self.parents = {
            child: parent for parent in ast.walk(self.tree) for child in ast.iter_child_nodes(parent)
        }
        self.aliases: dict[str, str] = {}  # local name -> rclpy module
        self.origins: dict[str, tuple[str, str]] = {}  # local name -> (rclpy module, name)
        self.findings: list[Finding] = []
        self._imports()
        self.flags = self._feature_flags()
        self.node_classes = self._node_classes()
        self.node_instances = self._node_instances()
        self._attributes()
        self._calls()

    # where names come from

    def _report(self, node: ast.AST, what: str) -> None:
        self.findings.append(Finding(self.path, node.lineno, what))

    def _imports(self) -> None:
        for statement in ast.walk(self.tree):
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.name.split(".")[0] != "rclpy":
                        continue
                    if alias.name not in self.modules and not self._guarded(statement, None, ImportError):
                        self._report(statement, f"import {alias.name}: Humble's rclpy has no such module")
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        self.aliases["rclpy"] = "rclpy"
            elif isinstance(statement, ast.ImportFrom) and (statement.module or "").split(".")[0] == "rclpy":
                module = statement.module
                guarded = self._guarded(statement, None, ImportError)
                if module not in self.modules:
                    if not guarded:
                        self._report(
                            statement, f"from {module} import ...: Humble's rclpy has no such module"
                        )
                    continue
                for alias in statement.names:
                    local = alias.asname or alias.name
                    if f"{module}.{alias.name}" in self.modules:
                        self.aliases[local] = f"{module}.{alias.name}"
                        continue
                    self.origins[local] = (module, alias.name)
                    if alias.name not in self.modules[module] and not guarded:
                        self._report(
                            statement, f"from {module} import {alias.name}: not in Humble's {module}"
                        )

    def _module_of(self, expression: ast.AST) -> str | None:
        """The rclpy module an expression names (``rclpy``, ``rclpy.node``, an alias), or None."""
        if isinstance(expression, ast.Name):
            return self.aliases.get(expression.id)
        if isinstance(expression, ast.Attribute):
            module = self._module_of(expression.value)
            if module is not None and f"{module}.{expression.attr}" in self.modules:
                return f"{module}.{expression.attr}"
        return None

    def _origin(self, expression: ast.AST) -> tuple[str, str] | None:
        """``(module, name)`` of an rclpy name used bare or dotted (``Node``, ``rclpy.node.Node``)."""
        if isinstance(expression, ast.Name):
            return self.origins.get(expression.id)
        if isinstance(expression, ast.Attribute):
            module = self._module_of(expression.value)
            if module is not None:
                return module, expression.attr
        return None

    def _node_classes(self) -> dict[ast.ClassDef, set[str]]:
        """Classes derived from rclpy's Node, with the members they define themselves."""
        classes: dict[str, ast.ClassDef] = {}
        changed = True
        while changed:
            changed = False
            for candidate in ast.walk(self.tree):
                if not isinstance(candidate, ast.ClassDef) or candidate.name in classes:
                    continue
                for base in candidate.bases:
                    if self._origin(base) in NODE_CLASSES or (
                        isinstance(base, ast.Name) and base.id in classes
                    ):
                        classes[candidate.name] = candidate
                        changed = True
                        break
        result = {}
        for definition in classes.values():
            own = set()
            for item in ast.walk(definition):
                if (
                    isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and self.parents.get(item) is definition
                ):
                    own.add(item.name)
                elif isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store):
                    if isinstance(item.value, ast.Name) and item.value.id == "self":
                        own.add(item.attr)
                elif (
                    isinstance(item, ast.Name)
                    and isinstance(item.ctx, ast.Store)
                    and (self.parents.get(self.parents.get(item)) is definition)
                ):
                    own.add(item.id)
            result[definition] = own
        return result

    def _node_instances(self) -> set[str]:
        """Expressions (``client``, ``self.node``) assigned a node made here."""
        names = {definition.name for definition in self.node_classes}
        instances = set()
        for assignment in ast.walk(self.tree):
            if isinstance(assignment, ast.Assign) and isinstance(assignment.value, ast.Call):
                function = assignment.value.func
                origin = self._origin(function)
                if origin in NODE_CLASSES | NODE_FACTORIES or (
                    isinstance(function, ast.Name) and function.id in names
                ):
                    instances.update(ast.unparse(target) for target in assignment.targets)
        return instances

    # feature detection

    def _feature_flags(self) -> dict[str, set[str]]:
        """name -> variables assigned from an expression that feature-detects it."""
        flags: dict[str, set[str]] = {}
        for assignment in ast.walk(self.tree):
            if (
                isinstance(assignment, (ast.Assign, ast.AnnAssign, ast.NamedExpr))
                and assignment.value is not None
            ):
                targets = getattr(assignment, "targets", None) or [assignment.target]
                for name in self._detected_in(assignment.value):
                    flags.setdefault(name, set()).update(ast.unparse(target) for target in targets)
        return flags

    @staticmethod
    def _detected_in(expression: ast.AST) -> set[str]:
        """Names that ``hasattr(obj, "name")`` or ``getattr(obj, "name", default)`` test in it."""
        names = set()
        for call in ast.walk(expression):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and (call.func.id == "hasattr" or (call.func.id == "getattr" and len(call.args) == 3))
                and len(call.args) >= 2
                and isinstance(call.args[1], ast.Constant)
                and isinstance(call.args[1].value, str)
            ):
                names.add(call.args[1].value)
        return names

    def _polarity(self, test: ast.AST, name: str) -> bool | None:
        """True: ``name`` exists where ``test`` holds; False: where it fails; None: not about it."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._polarity(test.operand, name)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            inner = [self._polarity(value, name) for value in test.values]
            if isinstance(test.op, ast.And) and True in inner:
                return True
            if isinstance(test.op, ast.Or) and False in inner:
                return False
            return None
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            inner = self._polarity(test.left, name)
            if inner is None:
                return None
            return inner if isinstance(test.ops[0], (ast.IsNot, ast.NotEq)) else not inner
        if isinstance(test, ast.NamedExpr):
            return self._polarity(test.value, name)
        if name in self._detected_in(test) and isinstance(test, ast.Call):
            return True
        if ast.unparse(test) in self.flags.get(name, ()):
            return True
        return None

    def _guarded(self, node: ast.AST, name: str | None, error: type[Exception]) -> bool:
        """Whether ``node`` runs only where ``name`` exists (``error``: what a ``try`` must catch)."""
        caught = {error.__name__, "Exception", "BaseException"} | (
            {"ModuleNotFoundError"} if error is ImportError else set()
        )
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if (
                name is not None
                and isinstance(parent, (ast.If, ast.While, ast.IfExp))
                and child is not parent.test
            ):
                polarity = self._polarity(parent.test, name)
                in_body = child is parent.body if isinstance(parent, ast.IfExp) else child in parent.body
                if (polarity is True and in_body) or (polarity is False and not in_body):
                    return True
            if name is not None and isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
                earlier = parent.values[: parent.values.index(child)]
                if any(self._polarity(value, name) is True for value in earlier):
                    return True
            if isinstance(parent, ast.Try) and child in parent.body:
                for handler in parent.handlers:
                    types = [] if handler.type is None else ast.walk(handler.type)
                    if handler.type is None or caught & {getattr(item, "id", None) for item in types}:
                        return True
            if name is not None:
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(parent, field, None)
                    if isinstance(block, list) and child in block:
                        for before in block[: block.index(child)]:
                            if (
                                isinstance(before, ast.If)
                                and self._polarity(before.test, name) is False
                                and isinstance(before.body[-1], EXITS)
                            ):
                                return True
            child, parent = parent, self.parents.get(parent)
        return False

    # the checks

    def _receiver_members(self, attribute: ast.Attribute) -> set[str] | None:
        """For ``<receiver>.<name>`` on a node: the members the node's own class defines; else None."""
        receiver = ast.unparse(attribute.value)
        if receiver in self.node_instances:
            return set()
        if receiver != "self":
            return None
        parent = self.parents.get(attribute)
        while parent is not None and not isinstance(parent, ast.ClassDef):
            parent = self.parents.get(parent)
        return self.node_classes.get(parent)

    def _attributes(self) -> None:
        for attribute in ast.walk(self.tree):
            if not isinstance(attribute, ast.Attribute) or not isinstance(attribute.ctx, ast.Load):
                continue
            module = self._module_of(attribute.value)
            if module is not None:
                name = attribute.attr
                if f"{module}.{name}" not in self.modules and name not in self.modules[module]:
                    if not self._guarded(attribute, name, AttributeError):
                        self._report(attribute, f"{module}.{name}: not in Humble's {module}")
                continue
            own = self._receiver_members(attribute)
            if own is None:
                continue
            name = attribute.attr
            if name in self.installed_node and name not in self.node and name not in own:
                if not self._guarded(attribute, name, AttributeError):
                    self._report(attribute, f"Node.{name}: not in Humble's rclpy (feature-detect it)")

    def _calls(self) -> None:
        for call in ast.walk(self.tree):
            if not isinstance(call, ast.Call):
                continue
            function = call.func
            if isinstance(function, ast.Name) and function.id == "getattr" and len(call.args) == 2:
                target, name = call.args
                if isinstance(name, ast.Constant) and isinstance(target, ast.Name):
                    fake = ast.Attribute(value=target, attr=name.value, ctx=ast.Load())
                    self.parents[fake] = call
                    own = self._receiver_members(fake)
                    if own is not None and name.value in self.installed_node and name.value not in self.node:
                        if name.value not in own and not self._guarded(call, name.value, AttributeError):
                            self._report(call, f"getattr(..., {name.value!r}): not in Humble's rclpy Node")
                continue
            if not isinstance(function, ast.Attribute):
                continue
            if self._is_super_init(function):
                self._check_keywords(call, "__init__")
            elif self._receiver_members(function) is not None and function.attr not in self._receiver_members(
                function
            ):
                self._check_keywords(call, function.attr)
            value = function.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "get_logger"
                and self._receiver_members(value.func) is not None
                and function.attr not in self.logger
                and not self._guarded(call, function.attr, AttributeError)
            ):
                self._report(call, f"get_logger().{function.attr}: not in Humble's RcutilsLogger")

    def _is_super_init(self, function: ast.Attribute) -> bool:
        if function.attr != "__init__" or not isinstance(function.value, ast.Call):
            return False
        if not (isinstance(function.value.func, ast.Name) and function.value.func.id == "super"):
            return False
        parent = self.parents.get(function)
        while parent is not None and not isinstance(parent, ast.ClassDef):
            parent = self.parents.get(parent)
        return parent in self.node_classes

    def _check_keywords(self, call: ast.Call, method: str) -> None:
        parameters = self.node.get(method)
        if parameters is None or "**kwargs" in parameters.split():
            return
        for keyword in call.keywords:
            if keyword.arg is not None and keyword.arg not in parameters.split():
                if not self._guarded(call, keyword.arg, TypeError):
                    self._report(call, f"Node.{method}({keyword.arg}=...): not in Humble's signature")


def humble_data():
    import ros_compat_data

    return ros_compat_data


def scan(source: str, path: str = "<snippet>", installed_node: set[str] | None = None) -> list[Finding]:
    humble = humble_data()
    if installed_node is None:
        installed_node = set(humble.HUMBLE_NODE) | KILTED_ONLY_EXAMPLES
    return HumbleScan(source, path, installed_node, humble).findings


def rclpy_modules() -> list[Path]:
    """Every module of the package that imports rclpy (anywhere in it)."""
    found = []
    for path in sorted((PACKAGE_ROOT / "ik_node").rglob("*.py")):
        for statement in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [alias.name for alias in statement.names] if isinstance(statement, ast.Import) else []
            if isinstance(statement, ast.ImportFrom) and statement.level == 0:
                names = [statement.module or ""]
            if any(name.split(".")[0] == "rclpy" for name in names):
                found.append(path)
                break
    return found


# --- Humble's rclpy API -------------------------------------------------------------------------

#: Node members of later rclpy releases that Humble lacks, for the scanner's own tests.
KILTED_ONLY_EXAMPLES = {"add_post_set_parameters_callback", "add_pre_set_parameters_callback"}


@pytest.mark.parametrize("path", rclpy_modules(), ids=lambda path: str(path.relative_to(PACKAGE_ROOT)))
def test_module_uses_only_humble_rclpy_api_or_feature_detects_it(path):
    node_module = pytest.importorskip("rclpy.node", reason="compares with the installed rclpy's Node")
    installed = {name for name in dir(node_module.Node) if not name.startswith("_")}
    relative = str(path.relative_to(PACKAGE_ROOT))
    findings = HumbleScan(path.read_text(), relative, installed, humble_data()).findings
    assert not findings, "rclpy API that Humble lacks, unguarded:\n" + "\n".join(map(str, findings))


def test_the_package_has_modules_that_import_rclpy_and_a_node_class():
    modules = rclpy_modules()
    assert PACKAGE_ROOT / "ik_node" / "ros" / "node.py" in modules
    classes = [
        definition.name
        for path in modules
        for definition in HumbleScan(path.read_text(), str(path), set(), humble_data()).node_classes
    ]
    assert classes, "no class derived from rclpy's Node found: the scanner sees nothing"


def self_attributes(definition: ast.ClassDef) -> set[str]:
    """The names a class's methods assign to ``self.<name>``."""
    names = set()
    for statement in ast.walk(definition):
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        else:
            continue
        for target in targets:
            for node in ast.walk(target):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                ):
                    names.add(node.attr)
    return names


def test_node_classes_leave_rclpy_s_own_attributes_alone():
    """A node class setting an attribute of rclpy's Node replaces rclpy's: ``self._timers = []``
    made the executor lose the node's other timers, ``self._parameters`` its parameters."""
    node_module = pytest.importorskip("rclpy.node", reason="reads the installed rclpy's Node")
    source = ast.parse(Path(node_module.__file__).read_text())
    rclpy_node = next(item for item in source.body if isinstance(item, ast.ClassDef) and item.name == "Node")
    taken = self_attributes(rclpy_node) | set(dir(node_module.Node))
    clashes = [
        f"{path.relative_to(PACKAGE_ROOT)}: {definition.name} sets self.{name}, an attribute of rclpy's Node"
        for path in rclpy_modules()
        for definition in HumbleScan(path.read_text(), str(path), set(), humble_data()).node_classes
        for name in sorted(self_attributes(definition) & taken)
    ]
    assert not clashes, "\n".join(clashes)


CALL = "self.add_post_set_parameters_callback(self._after)"
SNIPPETS = {
    "unguarded call": (f"{CALL}\n", 1),
    "if hasattr": (f"if hasattr(self, 'add_post_set_parameters_callback'):\n    {CALL}\n", 0),
    "else branch of hasattr": (
        f"if hasattr(self, 'add_post_set_parameters_callback'):\n    pass\nelse:\n    {CALL}\n",
        1,
    ),
    "if not hasattr ... else": (
        f"if not hasattr(self, 'add_post_set_parameters_callback'):\n    pass\nelse:\n    {CALL}\n",
        0,
    ),
    "early return": (f"if not hasattr(self, 'add_post_set_parameters_callback'):\n    return\n{CALL}\n", 0),
    "hasattr and call": (f"hasattr(self, 'add_post_set_parameters_callback') and {CALL}\n", 0),
    "getattr default": (
        "register = getattr(self, 'add_post_set_parameters_callback', None)\n"
        "if register is not None:\n    register(self._after)\n",
        0,
    ),
    "flag variable": (
        "supported = hasattr(self, 'add_post_set_parameters_callback')\nif supported:\n    " + CALL + "\n",
        0,
    ),
    "hasattr of another name": (f"if hasattr(self, 'add_on_set_parameters_callback'):\n    {CALL}\n", 1),
    "try AttributeError": (f"try:\n    {CALL}\nexcept AttributeError:\n    pass\n", 0),
    "try ValueError": (f"try:\n    {CALL}\nexcept ValueError:\n    pass\n", 1),
    "getattr without default": ("getattr(self, 'add_post_set_parameters_callback')(self._after)\n", 1),
    "bound method": ("register = self.add_pre_set_parameters_callback\n", 1),
    "Humble's own": ("self.add_on_set_parameters_callback(self._check)\n", 0),
    "keyword Humble lacks": ("self.create_timer(1.0, self._tick, autostart=False)\n", 1),
    "keyword Humble has": ("self.create_timer(1.0, self._tick, callback_group=None)\n", 0),
    "logger method Humble lacks": ("self.get_logger().critical('x')\n", 1),
    "logger throttle": ("self.get_logger().warning('x', throttle_duration_sec=1.0)\n", 0),
}


@pytest.mark.parametrize("name", SNIPPETS)
def test_scanner_reports_unguarded_humble_gaps_in_a_node_class(name):
    body, expected = SNIPPETS[name]
    source = "from rclpy.node import Node\n\n\nclass Probe(Node):\n    def setup(self):\n" + textwrap.indent(
        body, " " * 8
    )
    findings = scan(source)
    assert len(findings) == expected, "\n".join(map(str, findings)) or "nothing reported"


MODULE_SNIPPETS = {
    "from-import Humble lacks": ("from rclpy.parameter import parameter_dict_from_yaml_file\n", 1),
    "from-import in try ImportError": (
        "try:\n    from rclpy.parameter import parameter_dict_from_yaml_file\n"
        "except ImportError:\n    pass\n",
        0,
    ),
    "dotted use Humble lacks": ("import rclpy\nrclpy.parameter.parameter_dict_from_yaml_file('x')\n", 1),
    "dotted use guarded": (
        "import rclpy.parameter\nif hasattr(rclpy.parameter, 'parameter_dict_from_yaml_file'):\n"
        "    rclpy.parameter.parameter_dict_from_yaml_file('x')\n",
        0,
    ),
    "module Humble lacks": ("from rclpy.event_handler import SubscriptionEventCallbacks\n", 1),
    "Humble's names": (
        "import rclpy\nfrom rclpy.executors import ExternalShutdownException\nrclpy.init()\n"
        "rclpy.exceptions.ParameterUninitializedException\nrclpy.try_shutdown()\n",
        0,
    ),
    "a node made by create_node": (
        "import rclpy\nclient = rclpy.create_node('x')\n" + CALL.replace("self", "client"),
        1,
    ),
    "not rclpy": (
        "import os\nos.add_post_set_parameters_callback()\nself.add_post_set_parameters_callback()\n",
        0,
    ),
}


@pytest.mark.parametrize("name", MODULE_SNIPPETS)
def test_scanner_reports_rclpy_names_humble_lacks(name):
    source, expected = MODULE_SNIPPETS[name]
    findings = scan(source)
    assert len(findings) == expected, "\n".join(map(str, findings)) or "nothing reported"


def test_humble_data_has_the_known_gaps():
    humble = humble_data()
    assert "add_on_set_parameters_callback" in humble.HUMBLE_NODE
    for gap in ("add_post_set_parameters_callback", "add_pre_set_parameters_callback"):
        assert gap not in humble.HUMBLE_NODE
    assert "parameter_dict_from_yaml_file" not in humble.HUMBLE_MODULES["rclpy.parameter"]
    assert "ExternalShutdownException" in humble.HUMBLE_MODULES["rclpy.executors"]


# --- DDS on loopback ----------------------------------------------------------------------------


@pytest.mark.parametrize("distribution, localhost_only", [("humble", "1"), ("jazzy", None), (None, None)])
def test_node_processes_keep_dds_on_loopback_by_the_switch_their_distribution_reads(
    distribution, localhost_only
):
    from ik_node.ros.process import ros_environment

    base = {"ROS_LOCALHOST_ONLY": "1", "ROS_LOG_DIR": "/nonexistent"}  # as a user's shell may have it
    if distribution is not None:
        base["ROS_DISTRO"] = distribution
    environment = ros_environment(base)
    assert environment["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"  # Iron and later
    assert environment.get("ROS_LOCALHOST_ONLY") == localhost_only  # Humble's; Jazzy warns about it


# --- rosdep keys of package.xml -----------------------------------------------------------------


def evaluate_condition(condition: str, variables: dict[str, str]) -> bool:
    """REP 149's ``condition`` attribute: ``$VAR``/literals compared with ``==``/``!=`` (also
    ``<`` ... ``>=``), combined with ``and``/``or`` and parentheses."""
    tokens = re.findall(r"\(|\)|==|!=|<=|>=|<|>|[^\s()=!<>]+", condition)
    position = 0

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def value() -> str:
        token = take()
        return variables.get(token[1:], "") if token.startswith("$") else token

    def comparison() -> bool:
        if tokens[position] == "(":
            take()
            result = disjunction()
            assert take() == ")", condition
            return result
        left, operator, right = value(), take(), value()
        return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
                ">": left > right, ">=": left >= right}[operator]  # fmt: skip

    def conjunction() -> bool:
        result = comparison()
        while position < len(tokens) and tokens[position] == "and":
            take()
            result = comparison() and result
        return result

    def disjunction() -> bool:
        result = conjunction()
        while position < len(tokens) and tokens[position] == "or":
            take()
            result = conjunction() or result
        return result

    result = disjunction()
    assert position == len(tokens), f"cannot parse condition {condition!r}"
    return result


def package_keys(distribution: str) -> dict[str, str]:
    """package.xml's dependency keys that apply on ``distribution`` -> their tag."""
    root = ET.parse(PACKAGE_ROOT / "package.xml").getroot()
    variables = {"ROS_DISTRO": distribution, "ROS_VERSION": "2", "ROS_PYTHON_VERSION": "3"}
    keys = {}
    for element in root:
        if element.tag.endswith("depend") and evaluate_condition(
            element.get("condition", "1 == 1"), variables
        ):
            keys[element.text.strip()] = element.tag
    return keys


def test_condition_evaluation():
    humble = {"ROS_DISTRO": "humble", "ROS_VERSION": "2"}
    assert evaluate_condition("$ROS_DISTRO == humble", humble)
    assert not evaluate_condition("$ROS_DISTRO != humble", humble)
    assert evaluate_condition("$ROS_VERSION == 2 and ($ROS_DISTRO == jazzy or $ROS_DISTRO == humble)", humble)
    assert not evaluate_condition("$ROS_DISTRO == jazzy or $ROS_DISTRO == kilted", humble)


def test_package_xml_is_format_3_and_drops_what_it_should():
    root = ET.parse(PACKAGE_ROOT / "package.xml").getroot()
    assert root.get("format") == "3", "condition attributes need package format 3"
    exec_keys = {key for key, tag in package_keys("humble").items() if tag in ("depend", "exec_depend")}
    assert "python3-transforms3d" not in exec_keys, "the package no longer imports transforms3d at run time"
    assert "python3-numba" in exec_keys, "Humble (22.04) gets numba, the compiled core, from apt"


@pytest.mark.parametrize("distribution", sorted(UBUNTU))
def test_every_rosdep_key_resolves_to_an_existing_package(distribution):
    data = humble_data()
    rules = data.ROSDEP[distribution]
    codename = UBUNTU[distribution]
    problems = []
    for key, tag in sorted(package_keys(distribution).items()):
        if key not in rules:
            problems.append(f"{key}: not in ros_compat_data.py (regenerate it: see this file's docstring)")
        elif rules[key] is None:
            problems.append(f"{key} ({tag}): rosdep has no rule for it on {distribution} / Ubuntu {codename}")
        elif rules[key] != "ros":
            missing = set(rules[key].split()) & APT_MISSING.get(codename, set())
            if missing:
                problems.append(
                    f"{key} ({tag}): rosdep installs {sorted(missing)}, which Ubuntu {codename} lacks"
                )
    assert not problems, "\n".join(problems)


# --- regenerating ros_compat_data.py ------------------------------------------------------------


def _git(directory: str, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", directory, *arguments], check=True, capture_output=True, text=True
    ).stdout


def _public_names(tree: ast.Module) -> list[str]:
    """Names a module binds at top level (also under if/try/with), without leading underscores."""
    names = set()
    pending = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            for target in getattr(statement, "targets", None) or [statement.target]:
                names.update(item.id for item in ast.walk(target) if isinstance(item, ast.Name))
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                names.add(alias.asname or alias.name.split(".")[0])
        for field in ("body", "orelse", "finalbody", "handlers"):
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                pending.extend(getattr(statement, field, []))
    return sorted(name for name in names if not name.startswith("_") and name != "*")


def _class_members(tree: ast.Module, name: str) -> dict[str, str | None]:
    """Public members of a class: method -> its parameter names (``*args``/``**kwargs`` marked),
    property or class attribute -> None. ``__init__`` included."""
    definition = next(item for item in tree.body if isinstance(item, ast.ClassDef) and item.name == name)
    members: dict[str, str | None] = {}
    for item in definition.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            not item.name.startswith("_") or item.name == "__init__"
        ):
            decorators = [ast.unparse(decorator) for decorator in item.decorator_list]
            if any(decorator == "property" or decorator.endswith(".setter") for decorator in decorators):
                members[item.name] = None
                continue
            arguments = item.args
            names = [argument.arg for argument in arguments.posonlyargs + arguments.args][1:]
            names += ["*args"] if arguments.vararg else []
            names += [argument.arg for argument in arguments.kwonlyargs]
            names += ["**kwargs"] if arguments.kwarg else []
            members[item.name] = " ".join(names)
        elif isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    members[target.id] = None
    return members


def _words(names, indent: int) -> str:
    lines = textwrap.wrap(" ".join(names), 108 - indent, break_on_hyphens=False)
    return "\n".join(" " * indent + line for line in lines)


def _resolve_rosdep(key: str, distribution: str, released: set[str], rules: dict) -> str | None:
    if key in released:
        return "ros"
    rule = rules.get(key)
    if not isinstance(rule, dict) or "ubuntu" not in rule:
        return None
    ubuntu = rule["ubuntu"]
    if isinstance(ubuntu, dict):
        ubuntu = ubuntu.get(UBUNTU[distribution], ubuntu.get("*"))
    if isinstance(ubuntu, dict):  # {"pip": {"packages": [...]}} or {"apt": {"packages": [...]}}
        installer, spec = next(iter(ubuntu.items()))
        return f"{installer}: " + " ".join(spec.get("packages", []))
    return " ".join(ubuntu) if ubuntu else None


def write_data(rclpy_git: str, rosdistro_git: str, branch: str = "humble") -> None:
    """Write ros_compat_data.py from checkouts (git directories) of ros2/rclpy and ros/rosdistro."""
    import yaml

    commit = _git(rclpy_git, "rev-parse", branch).strip()
    tag = _git(rclpy_git, "describe", "--tags", "--always", commit).strip()
    paths = _git(rclpy_git, "ls-tree", "-r", "--name-only", commit, "rclpy/rclpy").split()
    modules = {}
    for path in sorted(paths):
        if not path.endswith(".py"):
            continue
        dotted = path[len("rclpy/") : -len(".py")].replace("/", ".").removesuffix(".__init__")
        if any(part.startswith("_") for part in dotted.split(".")):
            continue
        modules[dotted] = ast.parse(_git(rclpy_git, "show", f"{commit}:{path}"))
    node = _class_members(modules["rclpy.node"], "Node")
    logger = _class_members(modules["rclpy.impl.rcutils_logger"], "RcutilsLogger")

    distro_commit = _git(rosdistro_git, "rev-parse", "HEAD").strip()
    rules = {}
    for path in ("rosdep/base.yaml", "rosdep/python.yaml"):
        rules.update(yaml.safe_load(_git(rosdistro_git, "show", f"{distro_commit}:{path}")))
    root = ET.parse(PACKAGE_ROOT / "package.xml").getroot()
    keys = sorted({element.text.strip() for element in root if element.tag.endswith("depend")})
    rosdep = {}
    for distribution in sorted(UBUNTU):
        index = yaml.safe_load(
            _git(rosdistro_git, "show", f"{distro_commit}:{distribution}/distribution.yaml")
        )
        released = set()
        for name, repository in index["repositories"].items():
            release = repository.get("release") or {}
            if release.get("version"):
                released.update(release.get("packages", [name]))
        rosdep[distribution] = {key: _resolve_rosdep(key, distribution, released, rules) for key in keys}

    out = [
        '"""Generated by ``python test/test_ros_compat.py RCLPY_GIT_DIR ROSDISTRO_GIT_DIR``: do not edit.',
        "",
        f"rclpy: github.com/ros2/rclpy, branch {branch}, commit {commit} ({tag}):",
        "every module rclpy/rclpy/**/*.py, the class Node of rclpy/rclpy/node.py, RcutilsLogger of",
        "rclpy/rclpy/impl/rcutils_logger.py, read with ast (public = no leading underscore).",
        "",
        f"rosdep: github.com/ros/rosdistro, commit {distro_commit}:",
        "the rules of rosdep/base.yaml and rosdep/python.yaml for Ubuntu",
        ", ".join(f"{UBUNTU[name]} ({name})" for name in sorted(UBUNTU)) + ", and the packages released into",
        "<distribution>/distribution.yaml, for every key package.xml names.",
        '"""',
        "",
        f'RCLPY_SOURCE = "github.com/ros2/rclpy {branch} {commit}"',
        f'ROSDISTRO_SOURCE = "github.com/ros/rosdistro {distro_commit}"',
        "",
        "#: Humble's rclpy module -> the public names it binds at top level.",
        "HUMBLE_MODULES = {",
    ]
    for dotted, tree in modules.items():
        out += [f'    "{dotted}": """', _words(_public_names(tree), 8), '    """.split(),']
    out += [
        "}",
        "",
        "#: Humble's Node: method -> its parameters (space-separated); property/attribute -> None.",
    ]
    out += ["HUMBLE_NODE = {"]
    for name, value in sorted(node.items()):
        line = f'    "{name}": ' + ("None" if value is None else f'"{value}"') + ","
        if len(line) > 110:
            parts = textwrap.wrap(value, 96, drop_whitespace=False)
            line = f'    "{name}": (\n' + "".join(f'        "{part}"\n' for part in parts) + "    ),"
        out.append(line)
    out += ["}", "", "#: Humble's RcutilsLogger (what Node.get_logger() returns): its public methods."]
    out += [
        'HUMBLE_LOGGER = """',
        _words(sorted(name for name in logger if name != "__init__"), 4),
        '""".split()',
    ]
    out += [
        "",
        '#: distribution -> key -> "ros" (released into it), its apt packages ("pip: ..." for pip), or None.',
    ]
    out += ["ROSDEP = {"]
    for distribution, resolved in rosdep.items():
        out += [f'    "{distribution}": {{']
        out += [
            f'        "{key}": ' + ("None" if value is None else f'"{value}"') + ","
            for key, value in resolved.items()
        ]
        out += ["    },"]
    out += ["}", ""]
    DATA_FILE.write_text("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("Regenerate")[1])
    write_data(sys.argv[1], sys.argv[2])
