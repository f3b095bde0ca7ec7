"""The node's parameters on rclpy: declared from the schema (:mod:`ik_node.decisions.parameters`: one
spec per parameter, its descriptor stating the unit, the range or choices and whether it is
read-only), each run-time change validated as a whole before it is accepted and installed after.

:class:`NodeParameters` declares the node's parameters at start-up, each tip's and each
obstacle's, and each joint's when a description names them (defaults from the URDF); it keeps
the values (``{name: value}``; unset string arrays as None). A change is checked in the node's
on-set callback (:meth:`NodeParameters.validate`: every value against its spec, the rules across
parameters, and the policy's candidate model: a refusal names the parameter and the node keeps
its model and last command) and taken in the post-set one (:meth:`NodeParameters.take_change`;
in the on-set one on Humble, which has no post-set callback). Units as in the schema: s, Hz, m,
rad.
"""

from __future__ import annotations

import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter

from ..decisions.parameters import (
    NODE_PARAMETERS,
    OBSTACLE_PARAMETERS,
    PER_JOINT_OR_TIP,
    TIP_PARAMETERS,
    NodeSettings,
    ParameterSpec,
    check_obstacle_names,
    check_values,
    joint_parameter_defaults,
    spec_of,
)
from ..decisions.planning import Model
from ..errors import IKNodeError

__all__ = ["NodeParameters"]


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The ROS descriptor of a parameter spec: description with unit and choices, read-only,
    and its range (which rclpy then also enforces)."""
    extra = {}
    if spec.low is not None and spec.high is not None:
        if spec.kind == "integer":
            extra["integer_range"] = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
        else:
            extra["floating_point_range"] = [
                FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)
            ]
    if spec.choices:
        extra["additional_constraints"] = f"one of {list(spec.choices)}"
    return ParameterDescriptor(description=spec.described, read_only=spec.read_only, **extra)


class NodeParameters:
    """The parameters of ``node``; ``override_names``: the ones the command line sets
    (:func:`~ik_node.decisions.command_line.overridden_names`), so that entries for joints, tips or
    obstacles the node does not have are named in a warning."""

    def __init__(self, node, override_names: frozenset = frozenset()):
        self._node = node
        self._override_names = frozenset(override_names)
        self.values: dict = {}
        self._declaring = False
        self._change = None  # (values, settings, model) validated, installed after the set

    @property
    def settings(self) -> NodeSettings:
        """The typed record of the values."""
        return NodeSettings.from_values(self.values)

    def declare(self) -> list[str]:
        """Declare the node's parameters, then each tip's (``tip_links``) and each obstacle's
        (``obstacle_names``), and check them together; returns the tips."""
        self._declaring = True
        for spec in NODE_PARAMETERS:
            self._declare(spec.name, spec, spec.default)
        tips = list(self.values["tip_links"] or [])
        if not tips or not all(tips):
            raise IKNodeError(
                "parameter tip_links is required: the links that reach the goals, e.g. ['tool0']"
            )
        for tip in tips:
            for spec in TIP_PARAMETERS:
                self._declare(spec.name.format(tip), spec, spec.default)
        obstacle_names = list(self.values["obstacle_names"] or [])
        check_obstacle_names(obstacle_names)
        for name in obstacle_names:
            for spec in OBSTACLE_PARAMETERS:
                self._declare(spec.name.format(name), spec, spec.default)
        self._declaring = False
        for name in sorted(self._override_names):
            if name.startswith("obstacles.") and not self._node.has_parameter(name):
                self._node.get_logger().warning(
                    f"parameter '{name}' names no obstacle of obstacle_names {obstacle_names}; ignored"
                )
        check_values(self.values)
        return tips

    def declare_joints(self, tree) -> NodeSettings:
        """The per-joint parameters of ``tree``'s chain, defaulting to the URDF's limits and
        mid-range; returns the settings with them (their start-up values checked: a NaN rest
        posture is refused)."""
        self._declaring = True
        try:
            for name, default in joint_parameter_defaults(tree).items():
                if not self._node.has_parameter(name):
                    self._declare(name, spec_of(name), default)
        finally:
            self._declaring = False
        check_values(self.values)
        return self.settings

    def warn_unused(self, model, tips) -> None:
        """Warn about each command-line entry for a joint or tip ``model`` does not have (a
        multi-DOF joint has no per-joint parameters: said so)."""
        layout = model.layout
        multi_dof = {joint.name for joint in layout.multi_dof}
        for name in sorted(self._override_names):
            if name.startswith(PER_JOINT_OR_TIP) and not self._node.has_parameter(name):
                joint = name.split(".")[1]
                why = (
                    f"names joint '{joint}', a {model.robot.joints[joint].type} joint: it has no "
                    "per-joint parameters (no limits, weight 1, rest at the origin)"
                    if joint in multi_dof
                    else f"names no joint of the chain {list(layout.names)} or tip of {tips}"
                )
                self._node.get_logger().warning(f"parameter '{name}' {why}; ignored")

    def validate(self, parameters, model_state) -> SetParametersResult:
        """The on-set callback's answer: a change validated as a whole (every value against its
        spec, the rules across parameters, and the candidate model ``model_state`` (the policy's
        :class:`~ik_node.decisions.model_state.ModelState`) builds from it), kept for
        :meth:`take_change`; refused with the reason (logged) otherwise."""
        if self._declaring:
            return SetParametersResult(successful=True)
        values = {**self.values, **{parameter.name: parameter.value for parameter in parameters}}
        try:
            settings, model = model_state.candidate(
                values, frozenset(parameter.name for parameter in parameters)
            )
        except IKNodeError as error:
            self._node.get_logger().warning(f"parameter change refused: {error}")
            return SetParametersResult(successful=False, reason=str(error))
        self._change = (values, settings, model)
        return SetParametersResult(successful=True)

    def take_change(self) -> tuple[NodeSettings, Model | None] | None:
        """What :meth:`validate` accepted, ``(settings, model)`` for the policy to apply (the model
        None before a description), its values now the node's; None when there is none."""
        if self._declaring or self._change is None:
            return None
        self.values, settings, model = self._change
        self._change = None
        return settings, model

    def _declare(self, name: str, spec: ParameterSpec, default) -> None:
        """Declare ``name`` from its spec (a start-up override wins over ``default``; a
        string, string array or double array without a default starts unset: None) and record
        its value."""
        unset = {"string": Parameter.Type.STRING, "string_array": Parameter.Type.STRING_ARRAY,
                 "double_array": Parameter.Type.DOUBLE_ARRAY}  # fmt: skip
        initial = unset[spec.kind] if default is None and spec.kind in unset else default
        self._node.declare_parameter(name, initial, _descriptor(spec))
        try:
            self.values[name] = self._node.get_parameter(name).value
        except rclpy.exceptions.ParameterUninitializedException:
            self.values[name] = None
