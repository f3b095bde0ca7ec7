"""The configuration coordinates of a kinematic tree's joints: their names, limits and layout as
the compiled core's spans, joint vectors read from arrays or mappings, and the configuration
manifold (``q (+) dq``, quaternions kept unit) through :mod:`ik_node.compiled.manifold`.

:attr:`ConfigurationSpace.joint_names` names the configuration coordinates (a 1-DOF joint by its
name; ``root_joint/x`` ... ``root_joint/qw`` for a floating joint, see
:data:`ik_node.description.model.COORDINATE_SUFFIXES`); Jacobians have one column per tangent
coordinate (:attr:`ConfigurationSpace.tangent_names`, twists ``[v; w]`` in each joint's frame).
For trees of 1-DOF joints the two coincide."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..compiled import manifold, spatial
from ..errors import TargetError, UnknownJointError
from .frames import TYPE_CODES

__all__ = ["ConfigurationSpace"]


class ConfigurationSpace:
    """The configurations of ``joints`` (independent joints of ``robot``, in order).

    Attributes: ``joint_names`` (configuration coordinates, each joint once), ``tangent_names``
    (Jacobian columns), ``spans`` (per joint: type code, first configuration and tangent
    coordinate), ``lower``/``upper`` (position limits per configuration coordinate, rad or m,
    ``-inf``/``inf`` for continuous joints and multi-DOF coordinates), ``max_velocity`` (rad/s or
    m/s), ``continuous`` (coordinates that turn freely), ``neutral`` (the configuration with
    every coordinate 0 and unit quaternions).
    """

    def __init__(self, robot, joints):
        self.robot = robot
        self.joints = tuple(joints)
        spans, names, tangent_names = [], [], []
        self._config_at, self._tangent_at = {}, {}  # each joint's first coordinates, by name
        lower, upper, velocity, continuous = [], [], [], []
        for joint in self.joints:
            self._config_at[joint.name], self._tangent_at[joint.name] = len(names), len(tangent_names)
            spans.append((TYPE_CODES[joint.type], len(names), len(tangent_names)))
            names += joint.coordinate_names
            tangent_names += joint.tangent_names
            count, single = len(joint.coordinate_names), not joint.is_multi_dof
            lower += [joint.lower if single else -np.inf] * count
            upper += [joint.upper if single else np.inf] * count
            velocity += [joint.max_velocity if single else np.inf] * count
            continuous += [joint.type == "continuous"] * count
        self.joint_names, self.tangent_names = tuple(names), tuple(tangent_names)
        self._coordinate_index = {name: index for index, name in enumerate(names)}
        self.spans = np.array(spans, dtype=np.int64).reshape(-1, manifold.SPAN_COLUMNS)
        self.lower, self.upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
        self.max_velocity = np.array(velocity, dtype=float)
        self.continuous = np.array(continuous, dtype=bool)
        self.neutral = np.zeros(len(names))
        for kind, at, _ in self.spans:
            if spatial.QUATERNION_AT[kind] >= 0:
                self.neutral[at + spatial.QUATERNION_AT[kind] + 3] = 1.0

    def tangent_max_velocity(self, linear: float, angular: float) -> np.ndarray:
        """Speed limits per tangent coordinate: a 1-DOF joint's own [rad/s, m/s]; each twist
        component of a floating or planar joint ``linear`` [m/s] (its ``v...`` coordinates) or
        ``angular`` [rad/s]."""
        velocity = []
        for joint in self.joints:
            if joint.is_multi_dof:
                velocity += [
                    linear if name.rsplit("/", 1)[-1].startswith("v") else angular
                    for name in joint.tangent_names
                ]
            else:
                velocity += [joint.max_velocity] * len(joint.tangent_names)
        return np.array(velocity, dtype=float)

    def joint_vector(self, q, what: str = "joint vector") -> np.ndarray:
        """``q`` as a configuration in :attr:`joint_names` order, quaternions normalised.

        A mapping may name any subset of the coordinates (the rest at :attr:`neutral`), and a
        multi-DOF joint by its name with all its coordinates; an array must have one finite value
        per coordinate. ``what`` names ``q`` in error messages. A quaternion of norm 0 is refused,
        naming the joint.
        """
        if isinstance(q, Mapping):
            vector = self.neutral.copy()
            for name, value in q.items():
                index = self._coordinate_index.get(name)
                joint = self.robot.joints.get(name)
                if (
                    index is None
                    and joint is not None
                    and joint.is_multi_dof
                    and joint.coordinate_names[0] in self._coordinate_index
                ):
                    first = self._coordinate_index[joint.coordinate_names[0]]
                    values = np.asarray(value, dtype=float).reshape(-1)
                    if values.shape != (len(joint.coordinate_names),):
                        raise TargetError(
                            f"{what}: joint '{name}' takes {len(joint.coordinate_names)} values "
                            f"{list(joint.coordinate_names)}, got {values.size}"
                        )
                    vector[first : first + values.size] = values
                    continue
                if index is None:
                    if joint is not None and joint.mimic is not None:
                        raise TargetError(
                            f"joint '{name}' mimics '{self.robot.leader_of(name)}'; set the leader"
                        )
                    raise UnknownJointError(name, self.joint_names, what="joint of this tree")
                vector[index] = value
        else:
            vector = np.array(q, dtype=float).reshape(-1)
            if vector.shape != (len(self.joint_names),):
                raise TargetError(
                    f"{what} has {vector.size} values; expected {len(self.joint_names)} "
                    f"for joints {list(self.joint_names)}"
                )
        if not np.all(np.isfinite(vector)):
            bad = [self.joint_names[i] for i in np.flatnonzero(~np.isfinite(vector))]
            raise TargetError(f"{what} contains NaN or infinity for joints {bad}")
        return self.normalized(vector, what)

    def normalized(self, q: np.ndarray, what: str = "joint vector") -> np.ndarray:
        """``q`` (nq,) or (B, nq) with every quaternion scaled to unit norm (a new array when one
        is not unit); a zero quaternion raises :class:`TargetError` naming the joint."""
        for joint, (kind, at, _) in zip(self.joints, self.spans):
            start = spatial.QUATERNION_AT[kind]
            if start < 0:
                continue
            quaternion = q[..., at + start : at + start + 4]
            norm = np.linalg.norm(quaternion, axis=-1, keepdims=True)
            if np.any(norm < 1e-9):
                raise TargetError(f"{what}: the quaternion of joint '{joint.name}' (qx, qy, qz, qw) is zero")
            if not np.allclose(norm, 1.0, rtol=0.0, atol=1e-12):
                q = np.array(q, dtype=float)
                q[..., at + start : at + start + 4] = quaternion / norm
        return q

    def integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """``q (+) dq``: configuration ``q`` (nq,) moved by tangent ``dq`` (nv,) (see
        :func:`ik_node.compiled.manifold.integrate`; no limits applied)."""
        out = np.array(q, dtype=float)
        manifold.integrate(self.spans, out, np.ascontiguousarray(dq, dtype=float), out)
        return out

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """The tangent displacement (nv,) from ``q0`` to ``q1`` (see
        :func:`ik_node.compiled.manifold.difference`)."""
        out = np.empty(len(self.tangent_names))
        manifold.difference(
            self.spans, np.ascontiguousarray(q0, dtype=float), np.ascontiguousarray(q1, dtype=float), out
        )
        return out
