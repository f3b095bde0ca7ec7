"""Whole-body IK benchmark (issue 17): ik_node beside pink (differential IK on pinocchio).

Usage: python benchmark/bench_whole_body.py [--robot {talos,romeo,g1}] [--scenarios a b c d] [--samples N]
           [--timeout S] [--tolerance TOL] [--seed N] [--seed-posture {rest,neutral,mid}]
           [--no-peers] [--no-ik-node] [--pink-damping D] [--pink-lm-damping D]

Scenarios, on a humanoid of example-robot-data (default TALOS, ``talos_reduced.urdf``):

* ``a`` floating base: a 6-DOF floating joint ``root_joint`` (pinocchio's JointModelFreeFlyer) from
  ``world`` to the pelvis; tips = both feet (``*_sole_link``) and both hands, targets in ``world``;
* ``b`` stance foot: base = the left foot (no floating joint), tips = the right foot and both hands
  (paths going up the tree to the pelvis and down again);
* ``c`` fixed pelvis: base = the pelvis, tips = both hands, both feet and the head;
* ``d`` floating base, no seed: ``a``'s floating joint with ``c``'s five tips, and ik_node is
  given no seed (``seed=None``: the robot's pose and every joint unknown, as on a mocap or VR
  rig's first frame or after a tracking loss). pink, a local method, still starts at the seed
  posture (it needs a configuration to start from; the comparison favours it).

Protocol, per scenario: ``--samples`` configurations drawn uniformly within the joint limits (hard
URDF limits, intersected with ``<safety_controller>`` soft limits where a URDF has them) from a
seeded numpy Generator; in ``a`` the floating base is drawn near the seed's base pose (position
within +-``BASE_OFFSET`` per axis, rotated by up to ``BASE_TILT`` about a random axis). Targets =
pinocchio's FK of those configurations (T_base_tip; independent of ik_node). Every solve, of every
solver, starts at the same seed configuration: ``--seed-posture rest`` (default) is the robot's
SRDF reference posture (TALOS: ``half_sitting``, base at its ``root_joint`` value), ``neutral`` all
joints 0 (clipped into the limits) with the base upright and the lower foot on z = 0, ``mid``
mid-limits (ik_node's default rest posture) likewise. Budget ``--timeout`` (20 ms) per solve;
tolerance 1e-5 m and 1e-5 rad.

Verdict: a solve counts as solved when pinocchio's FK of the configuration the solver returned puts
every tip within the tolerance (|p - p_target| <= tol and the rotation angle of R^T R_target <=
tol), every joint within the limits (+``LIMIT_SLACK`` = 1e-6, pink's own limit tolerance) and a
floating base's quaternion has unit norm (+-1e-6). The solvers' own success flags are not used for
the verdict; ik_node's flag is compared with it (``flag agreement``: claimed and confirmed, claimed
but refuted, confirmed but not claimed). Configurations are mapped between pinocchio
(``model.names`` / ``idx_q``) and ik_node (``IKSolver.joint_names``) by name: a floating joint's
coordinates are ``root_joint/x, /y, /z, /qx, /qy, /qz, /qw`` (pinocchio's order), other joints their
own name. The pinocchio model is reduced (``buildReducedModel``) to the joints that move a tip
relative to the base, the others locked at the seed, so both solvers have the same unknowns. Times
are wall-clock per call (``perf_counter`` around it, in this process), failures included; solvers
take turns on each problem; ``WARMUP_SOLVES`` untimed solves first (ik_node's first call loads its
compiled kernels).

The peer, pink (PyPI ``pin-pink``, task-based differential IK on pinocchio), is driven as a plain
iterative IK solver:

* tasks: one ``FrameTask(tip, position_cost=1, orientation_cost=1, lm_damping=PINK_LM_DAMPING,
  gain=1)`` per tip with the world target T_world_base T_base_tip (``a``, ``c``: the base does not
  move); in ``b`` a ``RelativeFrameTask(tip, root=left foot, ...)`` with the same costs, since the
  base itself moves in pinocchio's model (rooted at the pelvis);
* limits: ``ConfigurationLimit(model, config_limit_gain=PINK_LIMIT_GAIN)`` only (no velocity limit:
  we want a pose, not a trajectory), pinocchio's limits replaced by the benchmark's;
* QP: ``solve_ik(configuration, tasks, dt=PINK_DT, solver="daqp", damping=PINK_DAMPING,
  safety_break=False)`` (qpsolvers' DAQP backend, installed as a wheel); with only configuration
  limits the QP's unknown is the displacement dq = v dt, so dt = 1 makes v the step itself;
* loop: ``q <- pin.integrate(model, q, v * dt)``, ``configuration.update(q)`` until every tip is
  within the tolerance (the very test of the verdict, on the FK pink has just run) or the budget is
  spent (checked before each step); no restarts (pink is a local method); a ``NoSolutionFound``
  from the QP ends the solve. The configuration it returns is the last iterate.

``PINK_*`` are pink's settings (``--pink-damping``, ``--pink-lm-damping`` change the two dampings).
On TALOS, a sweep on another seed (30 targets per scenario) gave the same solve rates for
lm_damping 0 to 1e-2 with damping 1e-12 or 1e-6, and lower ones for lm_damping >= 0.1 or damping
1e-3; pink's misses end centimetres to decimetres from the target (local minima, not slow
convergence): a 200 ms budget solved exactly the targets 20 ms did.

Not compared: placo (its wheel requires other pin/coal/numpy versions than ik_node's environment
has) and TRAC-IK (one chain at a time, while every scenario here couples chains through the torso
or a moving base).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import logging
import os
import platform
import sys
import time
import traceback
import warnings
import xml.etree.ElementTree as ElementTree
import zlib
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pinocchio as pin
from machine import cpu_model  # (benchmark/, the script's directory)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent

# rad or m: a joint this far past a limit still counts as within it; pink's own check_limits
# tolerance, as its QP (DAQP) meets the limit rows only to about this
LIMIT_SLACK = 1e-6
QUATERNION_SLACK = 1e-6  # | |quaternion| - 1 | above it: not a valid floating-base configuration
WARMUP_SOLVES = 5  # untimed solves per solver and scenario before the timed ones
BASE_OFFSET = 0.1  # m: largest offset per axis of a random floating base from the seed's base
BASE_TILT = 0.3  # rad: largest rotation of a random floating base from the seed's base
FLOATING_JOINT = "root_joint"  # pinocchio's and ik_node's name of the floating joint
FLOATING_COORDINATES = ("x", "y", "z", "qx", "qy", "qz", "qw")  # pinocchio's order
WORLD = "world"  # ik_node's name of the link the floating joint hangs from (pinocchio: universe)

PINK_DT = 1.0  # s: the QP's unknown is dq = v dt; with no velocity limit dt only rescales v
PINK_DAMPING = 1e-12  # Tikhonov weight on |dq|^2 (pink's default)
PINK_LM_DAMPING = 1e-3  # per task, weight on |e|^2 |dq|^2 (Levenberg-Marquardt, Sugihara 2011)
PINK_LIMIT_GAIN = 0.5  # pink's default: a step covers at most this part of the way to a limit
PINK_QP_SOLVER = "daqp"


# --------------------------------------------------------------------------- robots and scenarios


def example_robot_data_dir() -> Path:
    """example-robot-data's ``robots`` directory (the PyPI package's cmeel prefix)."""
    from importlib.metadata import distribution

    try:
        share = distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data")
    except PackageNotFoundError as error:
        raise SystemExit("example-robot-data is not installed: pip install example-robot-data") from error
    return Path(share) / "robots"


@dataclass(frozen=True)
class Humanoid:
    """A humanoid's URDF (relative to example-robot-data's ``robots``) and the links of the scenarios."""

    urdf: str
    pelvis: str
    left_foot: str
    right_foot: str
    left_hand: str
    right_hand: str
    head: str
    srdf: str | None = None  # with the reference posture ``rest_state``
    rest_state: str | None = None


HUMANOIDS = {
    "talos": Humanoid(
        "talos_data/robots/talos_reduced.urdf",
        pelvis="base_link",
        left_foot="left_sole_link",
        right_foot="right_sole_link",
        left_hand="arm_left_7_link",
        right_hand="arm_right_7_link",
        head="head_2_link",
        srdf="talos_data/srdf/talos.srdf",
        rest_state="half_sitting",
    ),
    "romeo": Humanoid(
        "romeo_description/urdf/romeo_small.urdf",
        pelvis="body",
        left_foot="l_sole",
        right_foot="r_sole",
        left_hand="l_wrist",
        right_hand="r_wrist",
        head="HeadRollLink",
        srdf="romeo_description/srdf/romeo_small.srdf",
        rest_state="half_sitting",
    ),
    "g1": Humanoid(
        "g1_description/urdf/g1_29dof_rev_1_0.urdf",
        pelvis="pelvis",
        left_foot="left_ankle_roll_link",
        right_foot="right_ankle_roll_link",
        left_hand="left_rubber_hand",
        right_hand="right_rubber_hand",
        head="head_link",
    ),
}


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    floating: bool
    base: str  # WORLD for the floating base
    tips: tuple[str, ...]
    seeded: bool = True  # False: ik_node solves with seed=None


def scenarios(robot: Humanoid) -> dict[str, Scenario]:
    r = robot
    return {
        "a": Scenario(
            "a",
            "floating base (feet, hands)",
            True,
            WORLD,
            (r.left_foot, r.right_foot, r.left_hand, r.right_hand),
        ),
        "b": Scenario(
            "b",
            "stance foot as base (right foot, hands)",
            False,
            r.left_foot,
            (r.right_foot, r.left_hand, r.right_hand),
        ),
        "c": Scenario(
            "c",
            "fixed pelvis (hands, feet, head)",
            False,
            r.pelvis,
            (r.left_hand, r.right_hand, r.left_foot, r.right_foot, r.head),
        ),
        "d": Scenario(
            "d",
            "floating base, no seed (hands, feet, head)",
            True,
            WORLD,
            (r.left_hand, r.right_hand, r.left_foot, r.right_foot, r.head),
            seeded=False,
        ),
    }


# --------------------------------------------------------------------------- reference model


def rotation_angle(R: np.ndarray) -> float:
    """Angle (rad) of a rotation matrix, accurate near 0 and pi (atan2 of sine and cosine parts)."""
    sine = 0.5 * np.linalg.norm((R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]))
    cosine = 0.5 * (np.trace(R) - 1.0)
    return float(np.arctan2(sine, cosine))


def soft_limits(urdf: Path) -> dict[str, tuple[float, float]]:
    """``<safety_controller>`` soft limits by joint name (commented-out ones are not read)."""
    limits = {}
    for joint in ElementTree.parse(urdf).getroot().iter("joint"):
        safety = joint.find("safety_controller")
        if safety is not None and "soft_lower_limit" in safety.attrib and "soft_upper_limit" in safety.attrib:
            limits[joint.get("name")] = (
                float(safety.get("soft_lower_limit")),
                float(safety.get("soft_upper_limit")),
            )
    return limits


def srdf_state(srdf: Path, state: str) -> dict[str, np.ndarray]:
    """Joint values (one or, for ``root_joint``, seven numbers) of an SRDF ``<group_state>``."""
    for group_state in ElementTree.parse(srdf).getroot().iter("group_state"):
        if group_state.get("name") == state:
            return {
                joint.get("name"): np.array(joint.get("value").split(), dtype=float)
                for joint in group_state.iter("joint")
            }
    raise ValueError(f"{srdf.name} has no group_state {state!r}")


class ReferenceModel:
    """pinocchio's model of one scenario: FK, limits, coordinate names, the seed and the verdict.

    The URDF is parsed by pinocchio (with a JointModelFreeFlyer named ``root_joint`` when
    floating) and reduced to the joints on the paths from the base to the tips (the others are
    locked at the seed posture). ``q`` vectors are pinocchio configurations of the reduced model.
    """

    def __init__(self, urdf: Path, robot: Humanoid, scenario: Scenario, seed_posture: str):
        self.scenario = scenario
        if scenario.floating:
            full = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
        else:
            full = pin.buildModelFromUrdf(str(urdf))
        for link in (*scenario.tips, *(() if scenario.base == WORLD else (scenario.base,))):
            if not full.existFrame(link):
                frames = sorted(frame.name for frame in full.frames if frame.type == pin.FrameType.BODY)
                raise ValueError(f"{urdf.name} has no link {link!r}; links: {frames}")
        full_seed = self._seed_posture(full, urdf, robot, seed_posture)
        needed = set()
        for link in (*scenario.tips, *(() if scenario.base == WORLD else (scenario.base,))):
            needed.update(full.supports[full.frames[full.getFrameId(link)].parentJoint])
        locked = [joint for joint in range(1, full.njoints) if joint not in needed]
        self.model = pin.buildReducedModel(full, locked, full_seed)
        self.data = self.model.createData()
        model = self.model
        self.seed = np.empty(model.nq)
        names, bounded = [], []
        soft = soft_limits(urdf)
        lower, upper = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
        for joint_id in range(1, model.njoints):
            joint, name = model.joints[joint_id], model.names[joint_id]
            start = joint.idx_q
            self.seed[start : start + joint.nq] = full_seed[full.joints[full.getJointId(name)].idx_q :][
                : joint.nq
            ]
            if joint.shortname() == "JointModelFreeFlyer":
                names += [f"{name}/{coordinate}" for coordinate in FLOATING_COORDINATES]
                bounded += [False] * 7
                lower[start : start + 7], upper[start : start + 7] = -np.inf, np.inf
            elif joint.nq == 1:
                names.append(name)
                bounded.append(True)
                if name in soft:
                    lower[start] = max(lower[start], soft[name][0])
                    upper[start] = min(upper[start], soft[name][1])
            else:
                raise ValueError(f"joint {name!r}: {joint.shortname()} (nq={joint.nq}) is not supported here")
        self.coordinate_names = names
        self.bounded = np.array(bounded)
        self.lower, self.upper = lower, upper
        self.floating_quaternion = (
            slice(3, 7)
            if scenario.floating and model.joints[1].shortname() == "JointModelFreeFlyer"
            else None
        )
        self.base_frame = None if scenario.base == WORLD else model.getFrameId(scenario.base)
        self.tip_frames = [model.getFrameId(tip) for tip in scenario.tips]
        self.seed = np.clip(
            self.seed, np.where(self.bounded, lower, -np.inf), np.where(self.bounded, upper, np.inf)
        )

    @staticmethod
    def _seed_posture(full, urdf: Path, robot: Humanoid, seed_posture: str) -> np.ndarray:
        """The seed configuration of the full model (see the module docstring)."""
        q = pin.neutral(full)
        floating = full.joints[1].shortname() == "JointModelFreeFlyer"
        start = 7 if floating else 0
        lower, upper = full.lowerPositionLimit[start:], full.upperPositionLimit[start:]
        if seed_posture == "rest" and robot.srdf is not None:
            state = srdf_state(example_robot_data_dir() / robot.srdf, robot.rest_state)
            for name, value in state.items():
                if full.existJointName(name):
                    joint = full.joints[full.getJointId(name)]
                    if joint.nq == len(value):
                        q[joint.idx_q : joint.idx_q + joint.nq] = value
            q[start:] = np.clip(q[start:], lower, upper)
            return q
        if seed_posture == "mid":
            q[start:] = 0.5 * (lower + upper)
        q[start:] = np.clip(q[start:], lower, upper)
        if floating:  # upright, the lower foot on the ground
            data = full.createData()
            pin.framesForwardKinematics(full, data, q)
            feet = [
                data.oMf[full.getFrameId(foot)].translation[2] for foot in (robot.left_foot, robot.right_foot)
            ]
            q[2] = -min(feet)
        return q

    def base_pose(self, data) -> pin.SE3:
        return pin.SE3.Identity() if self.base_frame is None else data.oMf[self.base_frame]

    def poses_in(self, data) -> list[np.ndarray]:
        """T_base_tip of every tip, from ``data`` after FK."""
        base_inverse = self.base_pose(data).inverse()
        return [(base_inverse * data.oMf[frame]).homogeneous for frame in self.tip_frames]

    def poses(self, q: np.ndarray) -> list[np.ndarray]:
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.poses_in(self.data)

    def errors_in(self, data, targets) -> tuple[float, float]:
        """Largest position error (m) and rotation angle (rad) over the tips, from ``data`` after FK."""
        position = rotation = 0.0
        for pose, target in zip(self.poses_in(data), targets):
            position = max(position, float(np.linalg.norm(pose[:3, 3] - target[:3, 3])))
            rotation = max(rotation, rotation_angle(pose[:3, :3].T @ target[:3, :3]))
        return position, rotation

    def verdict(self, q, targets, tolerance: float) -> tuple[bool, str]:
        """(solved, why not): FK within tolerance, joints within limits, unit quaternion."""
        if q is None:
            return False, "no configuration"
        q = np.asarray(q, dtype=float)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            return False, "not a finite configuration"
        if self.floating_quaternion is not None:
            norm = np.linalg.norm(q[self.floating_quaternion])
            if abs(norm - 1.0) > QUATERNION_SLACK:
                return False, f"quaternion norm {norm:.9f}"
        pin.framesForwardKinematics(self.model, self.data, q)
        position, rotation = self.errors_in(self.data, targets)
        if position > tolerance or rotation > tolerance:
            return False, "tip error"
        bounded = self.bounded
        if np.any(q[bounded] < self.lower[bounded] - LIMIT_SLACK) or np.any(
            q[bounded] > self.upper[bounded] + LIMIT_SLACK
        ):
            return False, "tips within tolerance, joints outside the limits"
        return True, ""

    def random_configuration(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform within the limits; a floating base near the seed's base pose."""
        q = self.seed.copy()
        bounded = self.bounded
        q[bounded] = rng.uniform(self.lower[bounded], self.upper[bounded])
        if self.floating_quaternion is not None:
            q[:3] = self.seed[:3] + rng.uniform(-BASE_OFFSET, BASE_OFFSET, size=3)
            axis = rng.normal(size=3)
            axis *= rng.uniform(0.0, BASE_TILT) / np.linalg.norm(axis)
            rotation = pin.Quaternion(self.seed[3:7]).matrix() @ pin.exp3(axis)
            q[3:7] = pin.Quaternion(rotation).coeffs()  # x, y, z, w
        return q


def harness_rng(seed: int, robot: str, scenario: str) -> np.random.Generator:
    """The targets' random stream, keyed on robot and scenario and apart from the solvers' own."""
    key = zlib.crc32(f"whole_body/{robot}/{scenario}".encode())
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))


# --------------------------------------------------------------------------- solvers


class SolverUnavailableError(Exception):
    """A solver that cannot take a scenario (yet): reported, not fatal."""


@dataclass
class Outcome:
    q: np.ndarray | None  # pinocchio configuration of the reference model
    claimed: bool
    iterations: float = float("nan")


class IKNodeRunner:
    """ik_node's IKSolver (default options, the benchmark tolerance), mapped by coordinate name."""

    name = "ik_node"

    def __init__(self, urdf: Path, reference: ReferenceModel, timeout: float, tolerance: float):
        try:
            from ik_node import IKSolver, load_robot
        except Exception as error:  # a library being rewritten: say so and go on with the peer
            raise SolverUnavailableError(f"import ik_node failed: {type(error).__name__}: {error}") from error
        scenario = reference.scenario
        try:
            with warnings.catch_warnings():  # mimic tags on fixed joints and the like
                warnings.simplefilter("ignore")
                robot = (
                    load_robot(str(urdf), root_joint="floating")
                    if scenario.floating
                    else load_robot(str(urdf))
                )
                self.solver = IKSolver(
                    robot,
                    base_link=scenario.base,
                    tip_links=list(scenario.tips),
                    position_tolerance=tolerance,
                    orientation_tolerance=tolerance,
                )
        except Exception as error:
            needs = {
                "a": "load_robot(urdf, root_joint='floating') and base_link='world'",
                "b": "a base link that is not an ancestor of the tips (paths up and down the tree)",
                "d": "load_robot(urdf, root_joint='floating') and base_link='world'",
            }.get(scenario.key, "")
            hint = f" (scenario {scenario.key} needs {needs})" if needs else ""
            raise SolverUnavailableError(f"{type(error).__name__}: {error}{hint}") from error
        names = list(self.solver.joint_names)
        index = {name: i for i, name in enumerate(reference.coordinate_names)}
        unknown = [name for name in names if name not in index]
        if unknown:
            raise SolverUnavailableError(
                f"ik_node coordinates missing from pinocchio's reduced model: {unknown}; "
                f"pinocchio's: {reference.coordinate_names}"
            )
        self.to_solver = np.array([index[name] for name in names])  # ik_node q = pinocchio q[to_solver]
        self.untouched = sorted(set(reference.coordinate_names) - set(names))  # stay at the seed
        self.dof = len(names)
        self.tips = list(scenario.tips)
        self.seeded = scenario.seeded
        self.timeout = timeout

    def solve(self, targets, seed) -> Outcome:
        result = self.solver.solve(
            dict(zip(self.tips, targets)),
            seed=seed[self.to_solver] if self.seeded else None,
            timeout=self.timeout,
        )
        q = None
        if result.q is not None:
            q = seed.copy()
            q[self.to_solver] = result.q
        return Outcome(q, bool(result.success), float(getattr(result, "iterations", np.nan)))


class PinkRunner:
    """pink's differential IK iterated to convergence (see the module docstring for the loop)."""

    name = "pink"

    def __init__(
        self,
        reference: ReferenceModel,
        timeout: float,
        tolerance: float,
        damping: float = PINK_DAMPING,
        lm_damping: float = PINK_LM_DAMPING,
    ):
        try:
            import pink
            from pink.limits import ConfigurationLimit
            from pink.tasks import FrameTask, RelativeFrameTask
        except ImportError as error:
            raise SolverUnavailableError(
                f"pink not importable ({error}): pip install pin-pink daqp"
            ) from error
        import qpsolvers

        if PINK_QP_SOLVER not in qpsolvers.available_solvers:
            raise SolverUnavailableError(f"QP solver {PINK_QP_SOLVER} missing: pip install {PINK_QP_SOLVER}")
        self._pink = pink
        self.reference = reference
        self.model = pin.Model(reference.model)  # pink caches attributes on the model: its own copy
        self.model.lowerPositionLimit = np.where(
            reference.bounded, reference.lower, self.model.lowerPositionLimit
        )
        self.model.upperPositionLimit = np.where(
            reference.bounded, reference.upper, self.model.upperPositionLimit
        )
        self.data = self.model.createData()
        self.limits = [ConfigurationLimit(self.model, config_limit_gain=PINK_LIMIT_GAIN)]
        scenario = reference.scenario
        # a base moved by joints (the stance foot) needs tasks relative to it; a fixed one does not
        base = reference.base_frame
        self.relative = base is not None and self.model.frames[base].parentJoint != 0
        if self.relative:
            self.tasks = [
                RelativeFrameTask(tip, scenario.base, 1.0, 1.0, lm_damping=lm_damping, gain=1.0)
                for tip in scenario.tips
            ]
        else:
            self.tasks = [FrameTask(tip, 1.0, 1.0, lm_damping=lm_damping, gain=1.0) for tip in scenario.tips]
        # a fixed base (pelvis, world) has the same world pose in every configuration
        pin.framesForwardKinematics(self.model, self.data, reference.seed)
        self.world_base = reference.base_pose(self.data).copy()
        self.damping = damping
        self.timeout = timeout
        self.tolerance = tolerance
        self.dof = self.model.nv

    def solve(self, targets, seed) -> Outcome:
        pink, model = self._pink, self.model
        start = time.perf_counter()
        deadline = start + self.timeout
        for task, target in zip(self.tasks, targets):
            if self.relative:
                task.set_target(pin.SE3(target))
            else:
                task.set_target(self.world_base * pin.SE3(target))
        configuration = pink.Configuration(model, self.data, seed, copy_data=False)
        iterations = 0
        while True:
            position, rotation = self.reference.errors_in(configuration.data, targets)
            if position <= self.tolerance and rotation <= self.tolerance:
                return Outcome(configuration.q.copy(), True, iterations)
            if time.perf_counter() >= deadline:
                return Outcome(configuration.q.copy(), False, iterations)
            try:
                velocity = pink.solve_ik(
                    configuration,
                    self.tasks,
                    PINK_DT,
                    solver=PINK_QP_SOLVER,
                    damping=self.damping,
                    limits=self.limits,
                    safety_break=False,
                )
            except pink.exceptions.NoSolutionFound:
                return Outcome(configuration.q.copy(), False, iterations)
            configuration.update(pin.integrate(model, configuration.q, velocity * PINK_DT))
            iterations += 1


# --------------------------------------------------------------------------- measuring


@dataclass
class Stats:
    dof: int
    times: list = field(default_factory=list)  # s
    solved: list = field(default_factory=list)  # the harness's verdict
    claimed: list = field(default_factory=list)  # the solver's flag
    iterations: list = field(default_factory=list)
    failures: dict = field(default_factory=dict)  # why not solved -> count

    def add(self, elapsed: float, outcome: Outcome, solved: bool, why: str) -> None:
        self.times.append(elapsed)
        self.solved.append(solved)
        self.claimed.append(outcome.claimed)
        self.iterations.append(outcome.iterations)
        if not solved:
            self.failures[why] = self.failures.get(why, 0) + 1


@dataclass
class ScenarioResult:
    scenario: Scenario
    stats: dict  # solver name -> Stats
    notes: list


def run_scenario(
    urdf: Path,
    robot_name: str,
    robot: Humanoid,
    scenario: Scenario,
    arguments: argparse.Namespace,
) -> ScenarioResult:
    reference = ReferenceModel(urdf, robot, scenario, arguments.seed_posture)
    notes = []
    runners = []
    builders = []
    if not arguments.no_ik_node:
        builders.append(
            ("ik_node", lambda: IKNodeRunner(urdf, reference, arguments.timeout, arguments.tolerance))
        )
    if not arguments.no_peers:
        builders.append(
            (
                "pink",
                lambda: PinkRunner(
                    reference,
                    arguments.timeout,
                    arguments.tolerance,
                    arguments.pink_damping,
                    arguments.pink_lm_damping,
                ),
            )
        )
    for name, build in builders:
        try:
            runner = build()
        except SolverUnavailableError as error:
            notes.append(f"({scenario.key}) {name} unavailable: {error}")
            continue
        if getattr(runner, "untouched", None):
            notes.append(f"({scenario.key}) {name} leaves {runner.untouched} at the seed")
        runners.append(runner)

    rng = harness_rng(arguments.seed, robot_name, scenario.key)
    problems = [
        reference.poses(reference.random_configuration(rng)) for _ in range(arguments.samples + WARMUP_SOLVES)
    ]
    seed = reference.seed
    stats = {runner.name: Stats(runner.dof) for runner in runners}
    for index, targets in enumerate(problems):
        for runner in list(runners):
            start = time.perf_counter()
            try:
                outcome = runner.solve(targets, seed)
            except Exception as error:  # a solver that breaks mid-run is reported and dropped
                notes.append(
                    f"({scenario.key}) {runner.name} raised, dropped: {type(error).__name__}: {error}"
                )
                traceback.print_exc(file=sys.stderr)
                runners.remove(runner)
                stats.pop(runner.name, None)
                continue
            elapsed = time.perf_counter() - start
            if index < WARMUP_SOLVES:
                continue
            solved, why = reference.verdict(outcome.q, targets, arguments.tolerance)
            stats[runner.name].add(elapsed, outcome, solved, why)
        if index == WARMUP_SOLVES - 1:
            gc.collect()
    nq, names = reference.model.nq, reference.coordinate_names
    notes.insert(
        0, f"({scenario.key}) pinocchio's reduced model: nq {nq}, nv {reference.model.nv}: {', '.join(names)}"
    )
    return ScenarioResult(scenario, stats, notes)


# --------------------------------------------------------------------------- reporting


def versions() -> str:
    found = [f"Python {platform.python_version()}", f"numpy {np.__version__}", f"pinocchio {pin.__version__}"]
    for distribution in ("pin-pink", "qpsolvers", "daqp", "example-robot-data"):
        try:
            found.append(f"{distribution} {version(distribution)}")
        except PackageNotFoundError:
            pass
    return ", ".join(found)


def machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


TABLE_HEADER = (
    f"{'scenario':<44}{'DOF':>4}  {'solver':<8}{'solved %':>9}{'mean ms':>9}{'median':>9}{'p95':>9}"
    f"{'p99':>9}{'max':>9}{'iters':>7}{'>budget':>8}"
)


def table_row(label: str, name: str, stats: Stats, timeout: float) -> str:
    times = np.array(stats.times) * 1e3
    over = int(np.sum(times > 1.1 * timeout * 1e3))
    iterations = np.array(stats.iterations, dtype=float)
    mean_iterations = np.nanmean(iterations) if np.any(np.isfinite(iterations)) else float("nan")
    return (
        f"{label:<44}{stats.dof:>4}  {name:<8}{100 * np.mean(stats.solved):>9.1f}{times.mean():>9.3f}"
        f"{np.median(times):>9.3f}{np.percentile(times, 95):>9.3f}"
        f"{np.percentile(times, 99):>9.3f}{times.max():>9.3f}"
        f"{mean_iterations:>7.1f}{over:>8}"
    )


def report(results: list[ScenarioResult], arguments, robot_name: str, urdf: Path, started) -> None:
    print(f"date: {started.isoformat(timespec='seconds')}")
    print(f"machine: {machine()}")
    print(f"versions: {versions()}")
    module = sys.modules.get("ik_node")
    if module is not None:
        print(f"ik_node: {Path(module.__file__).parent}")
    print(f"robot: {robot_name} ({urdf})")
    print(
        f"protocol: {arguments.samples} random in-limit configurations per scenario (seed {arguments.seed}), "
        f"every solve from the '{arguments.seed_posture}' seed posture, "
        f"timeout {arguments.timeout * 1e3:g} ms, "
        f"tolerance {arguments.tolerance:g} m / rad; verdict by pinocchio FK of the returned configuration"
    )
    print(
        f"pink: FrameTask/RelativeFrameTask costs 1/1, gain 1, lm_damping {arguments.pink_lm_damping:g}; "
        f"damping {arguments.pink_damping:g}; ConfigurationLimit gain {PINK_LIMIT_GAIN:g}; dt {PINK_DT:g}; "
        f"QP {PINK_QP_SOLVER}; no restarts"
    )
    print()
    print(
        "Time per call (failures included); iters: mean iterations per call; >budget: calls > 1.1 x timeout"
    )
    print(TABLE_HEADER)
    print("-" * len(TABLE_HEADER))
    for result in results:
        label = f"({result.scenario.key}) {result.scenario.title}"
        for name, stats in result.stats.items():
            if stats.times:
                print(table_row(label, name, stats, arguments.timeout))
    print()
    print("ik_node's own success flag against the verdict")
    for result in results:
        stats = result.stats.get("ik_node")
        if stats is None or not stats.times:
            print(f"  ({result.scenario.key}) ik_node not run")
            continue
        claimed, solved = np.array(stats.claimed), np.array(stats.solved)
        counts = (
            f"claimed and confirmed {int(np.sum(claimed & solved))}, "
            f"claimed but refuted {int(np.sum(claimed & ~solved))}, "
            f"confirmed but not claimed {int(np.sum(~claimed & solved))}, "
            f"neither {int(np.sum(~claimed & ~solved))}"
        )
        print(f"  ({result.scenario.key}) agreement {100 * np.mean(claimed == solved):.1f} %: {counts}")
    print()
    print("Why not solved (verdict)")
    for result in results:
        for name, stats in result.stats.items():
            if stats.failures:
                reasons = ", ".join(f"{why}: {count}" for why, count in sorted(stats.failures.items()))
                print(f"  ({result.scenario.key}) {name}: {reasons}")
    notes = [note for result in results for note in result.notes]
    if notes:
        print()
        print("Notes")
        for note in notes:
            print(f"  - {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", choices=sorted(HUMANOIDS), default="talos", help="humanoid (talos)")
    parser.add_argument("--scenarios", nargs="+", choices=("a", "b", "c", "d"), default=["a", "b", "c", "d"])
    parser.add_argument("--samples", type=int, default=500, help="random configurations per scenario (500)")
    parser.add_argument("--timeout", type=float, default=0.02, help="budget per solve, s (0.02)")
    parser.add_argument("--tolerance", type=float, default=1e-5, help="m and rad (1e-5)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the configurations (0)")
    parser.add_argument(
        "--seed-posture",
        choices=("rest", "neutral", "mid"),
        default="rest",
        help="the configuration every solve starts from: the SRDF reference posture (rest, default; "
        "neutral when the robot has none), all joints 0 (neutral) or mid-limits (mid)",
    )
    parser.add_argument("--no-peers", action="store_true", help="ik_node only")
    parser.add_argument("--no-ik-node", action="store_true", help="peers only")
    parser.add_argument("--pink-damping", type=float, default=PINK_DAMPING, help=f"({PINK_DAMPING:g})")
    parser.add_argument(
        "--pink-lm-damping", type=float, default=PINK_LM_DAMPING, help=f"({PINK_LM_DAMPING:g})"
    )
    arguments = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # pink's "out of limits" warnings (the verdict counts them)
    if arguments.samples < 1:
        parser.error("--samples must be at least 1")
    robot = HUMANOIDS[arguments.robot]
    urdf = example_robot_data_dir() / robot.urdf
    if not urdf.is_file():
        raise SystemExit(f"{urdf} not found (example-robot-data {version('example-robot-data')})")
    started = datetime.datetime.now().astimezone()
    results = []
    for key in arguments.scenarios:
        scenario = scenarios(robot)[key]
        results.append(run_scenario(urdf, arguments.robot, robot, scenario, arguments))
        print(f"  done ({key})", file=sys.stderr, flush=True)
    report(results, arguments, arguments.robot, urdf, started)


if __name__ == "__main__":
    main()
