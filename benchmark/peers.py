"""Peer IK solvers behind one interface, for benchmarking ik_node against them.

Every adapter is built as ``Peer(urdf_xml, base_link, tip_link, timeout, tolerance)`` and has
``name``, ``joint_names`` (movable joints base -> tip), ``lower``/``upper`` (rad or m),
``continuous`` (bool mask), ``fk(q) -> 4x4`` (tip pose in the base frame, m) and
``solve(target_4x4, seed) -> q or None``. ``timeout`` is the wall-clock budget of one solve (s).
``tolerance`` (m and rad) is each peer's own convergence test: KDL bounds every component of
the error twist in the base frame, TRAC-IK every component in the target (tip) frame, RTB the
norm of the 6-vector error; so a solution's |dp| and |rotation angle| are within sqrt(3)*tol
(all three), and base-frame components of TRAC-IK's can exceed tol by up to that factor.

Conventions shared by all adapters:
- limits are the URDF ``<limit lower upper>``; ``<safety_controller>`` soft limits are ignored;
  ``set_limits(lower, upper)`` replaces them (e.g. by the limits another solver uses);
- continuous joints are unbounded for the solvers, reported as [-pi, pi] in ``lower``/``upper``
  (the range random restarts sample), and wrapped into [-pi, pi) in returned solutions;
- chains with mimic, planar or floating joints are rejected (ValueError).

Peers: TRAC-IK (PyPI ``pytracik``), Orocos KDL (Debian ``python3-pykdl``, NR_JL + random
restarts as MoveIt's KDL plugin) and Robotics Toolbox's C++ ``ik_LM`` (PyPI
``roboticstoolbox-python``). ``available_peers()`` says which import here.
Self-check: ``python benchmark/peers.py URDF BASE TIP [--targets N]``. Never uses ikpy.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)  # what TRAC-IK and MoveIt use as "no limit"
DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


# --------------------------------------------------------------------------- shared helpers


@contextlib.contextmanager
def _quiet_fds():
    """Silence C/C++ writes to stdout and stderr (file descriptors 1, 2) inside the block."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def _kinematic_xml(urdf_xml: str | bytes) -> bytes:
    """URDF bytes without visual, collision, transmission and gazebo elements.

    urdf_parser_py rejects PR2's old-style ``<transmission type=...>``, and Robotics Toolbox
    tries to resolve every mesh file; kinematics needs none of these elements.
    """
    from lxml import etree

    data = urdf_xml.encode() if isinstance(urdf_xml, str) else urdf_xml
    root = etree.fromstring(data)  # bytes: lxml refuses str with an encoding declaration
    for element in list(root.iter("visual", "collision", "transmission", "gazebo")):
        element.getparent().remove(element)
    return etree.tostring(root)


class _Chain:
    """The base -> tip joint path of a URDF, read with urdf_parser_py.

    ``joints``: every joint on the path (fixed ones included), root to tip;
    ``movable``: the movable ones, in the same order.
    """

    def __init__(self, urdf_xml: str | bytes, base_link: str, tip_link: str):
        from urdf_parser_py.urdf import URDF

        with contextlib.redirect_stderr(io.StringIO()):  # "Unknown attribute/tag" noise
            robot = URDF.from_xml_string(_kinematic_xml(urdf_xml))
        for link in (base_link, tip_link):
            if link not in robot.link_map:
                raise ValueError(f"no link {link!r} in the URDF")
        names = robot.get_chain(base_link, tip_link, joints=True, links=False)
        self.joints = [robot.joint_map[name] for name in names]
        # get_chain walks up from both ends; it must be a pure descent from base to tip.
        parent = base_link
        for joint in self.joints:
            if joint.parent != parent:
                raise ValueError(f"{tip_link!r} does not descend from {base_link!r}")
            parent = joint.child
        self.movable = [j for j in self.joints if j.type != "fixed"]
        lower, upper, continuous = [], [], []
        for joint in self.movable:
            if joint.type not in ("revolute", "continuous", "prismatic"):
                raise ValueError(f"joint {joint.name!r} of type {joint.type!r} is not supported")
            if joint.mimic is not None:
                raise ValueError(f"mimic joint {joint.name!r} is not supported")
            if joint.type == "continuous":
                lower.append(-np.pi)
                upper.append(np.pi)
            else:
                if joint.limit is None:
                    raise ValueError(f"joint {joint.name!r} has no <limit>")
                lower.append(float(joint.limit.lower))
                upper.append(float(joint.limit.upper))
            continuous.append(joint.type == "continuous")
        self.joint_names = [j.name for j in self.movable]
        self.lower = np.array(lower)
        self.upper = np.array(upper)
        self.continuous = np.array(continuous, dtype=bool)


class _PeerBase:
    """Shared state and helpers of the adapters."""

    name = "peer"

    def __init__(
        self, urdf_xml: str | bytes, base_link: str, tip_link: str, timeout: float, tolerance: float
    ):
        self.base_link = base_link
        self.tip_link = tip_link
        self.timeout = float(timeout)
        self.tolerance = float(tolerance)
        self._chain = _Chain(urdf_xml, base_link, tip_link)
        self.joint_names = list(self._chain.joint_names)
        self.lower = self._chain.lower.copy()
        self.upper = self._chain.upper.copy()
        self.continuous = self._chain.continuous.copy()
        self._rng = np.random.default_rng(0)

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None if this peer can be built here, else why not and how to get it."""
        raise NotImplementedError

    def _wrap(self, q: np.ndarray) -> np.ndarray:
        """Continuous joints into [-pi, pi) (rad); others unchanged."""
        q = np.array(q, dtype=float)
        q[self.continuous] = (q[self.continuous] + np.pi) % (2 * np.pi) - np.pi
        return q

    def _random_q(self) -> np.ndarray:
        return self._rng.uniform(self.lower, self.upper)

    def set_limits(self, lower, upper) -> None:
        """Bound the joints by ``lower``/``upper`` (``joint_names`` order; rad or m) instead of the
        URDF limits, for the solve, the random restarts and the result check alike.

        Values given for continuous joints are ignored: they stay unbounded ([-pi, pi] reported).
        """
        lower = np.asarray(lower, dtype=float).reshape(-1)
        upper = np.asarray(upper, dtype=float).reshape(-1)
        n = len(self.joint_names)
        if lower.shape != (n,) or upper.shape != (n,):
            raise ValueError(f"limits need {n} values each ({self.joint_names})")
        bounded = ~self.continuous
        if not (np.all(np.isfinite(lower[bounded])) and np.all(np.isfinite(upper[bounded]))):
            raise ValueError("limits of non-continuous joints must be finite")
        if np.any(lower[bounded] > upper[bounded]):
            raise ValueError("a lower limit is above its upper limit")
        self.lower = np.where(self.continuous, -np.pi, lower)
        self.upper = np.where(self.continuous, np.pi, upper)
        self._apply_limits()

    def _apply_limits(self) -> None:
        """Hand ``self.lower``/``self.upper`` to the underlying solver (adapters override)."""

    def _solver_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Limits to hand a solver: continuous joints get -+FLT_MAX (unbounded)."""
        return (
            np.where(self.continuous, -FLT_MAX, self.lower),
            np.where(self.continuous, FLT_MAX, self.upper),
        )


def _quaternion_xyzw(R: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        w, x = 0.25 * s, (R[2, 1] - R[1, 2]) / s
        y, z = (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, x = (R[2, 1] - R[1, 2]) / s, 0.25 * s
        y, z = (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        w, x = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s
        y, z = 0.25 * s, (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        w, x = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s
        y, z = (R[1, 2] + R[2, 1]) / s, 0.25 * s
    n = np.sqrt(x * x + y * y + z * z + w * w)
    return x / n, y / n, z / n, w / n


# --------------------------------------------------------------------------- TRAC-IK


class TracIKPeer(_PeerBase):
    """TRAC-IK (KDL NR_JL with random restarts racing an SQP solver), via PyPI ``pytracik``.

    Solve type "Speed" (first solution found), ``epsilon = tolerance``, ``timeout`` per call
    (enforced inside TRAC-IK). Its NLopt half tests the error twist in the target frame
    (KDL ``diffRelative``), so base-frame components of a solution's error can exceed tol.
    pytracik parses joints with a ``<safety_controller>`` as limits [0, 0], so the URDF limits
    are set afterwards with ``set_joint_limits`` (continuous joints stay -+FLT_MAX, which is how
    TRAC-IK marks them continuous when it builds the solver).
    """

    name = "trac_ik"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        try:
            import pytracik  # noqa: F401
        except ImportError as error:
            return f"pytracik not installed ({error}): pip install pytracik"
        return None

    def __init__(self, urdf_xml, base_link, tip_link, timeout, tolerance, solve_type: str = "Speed"):
        super().__init__(urdf_xml, base_link, tip_link, timeout, tolerance)
        import pytracik

        self._pytracik = pytracik
        xml = urdf_xml.decode() if isinstance(urdf_xml, bytes) else urdf_xml
        with _quiet_fds():  # "root link has an inertia" from its built-in kdl_parser
            self._solver = pytracik.TRAC_IK(
                base_link,
                tip_link,
                xml,
                self.timeout,
                self.tolerance,
                getattr(pytracik.SolveType, solve_type),
            )
        dof = pytracik.get_num_joints(self._solver)
        if dof != len(self.joint_names):
            raise ValueError(f"TRAC-IK sees {dof} joints, the URDF chain has {len(self.joint_names)}")
        self._apply_limits()

    def _apply_limits(self) -> None:
        lower, upper = self._solver_limits()
        self._pytracik.set_joint_limits(self._solver, lower.tolist(), upper.tolist())

    def fk(self, q) -> np.ndarray:
        return np.array(self._pytracik.fk(self._solver, np.asarray(q, dtype=float)))

    def solve(self, target, seed):
        target = np.asarray(target, dtype=float)
        qx, qy, qz, qw = _quaternion_xyzw(target[:3, :3])
        x, y, z = target[:3, 3]
        result = self._pytracik.ik(self._solver, np.asarray(seed, dtype=float), x, y, z, qx, qy, qz, qw)
        # result[0] is TRAC-IK's return code (< 0: failure, and the rest is uninitialised).
        if result[0] < 0:
            return None
        return self._wrap(result[1:])


# --------------------------------------------------------------------------- Orocos KDL


def _import_pykdl():
    """PyKDL from Debian's python3-pykdl (built for the system Python 3.11).

    Only PyKDL is taken from Debian's dist-packages: the path is on sys.path just for the import.
    """
    try:
        import PyKDL

        return PyKDL
    except ImportError:
        pass
    sys.path.insert(0, DEBIAN_DIST_PACKAGES)
    try:
        import PyKDL
    finally:
        sys.path.remove(DEBIAN_DIST_PACKAGES)
    return PyKDL


def kdl_chain(kdl, chain: _Chain):
    """PyKDL.Chain of a URDF path, as kdl_parser builds it (one Segment per joint)."""
    segments = []
    for joint in chain.joints:
        origin = joint.origin
        xyz = origin.xyz if origin is not None and origin.xyz is not None else [0.0, 0.0, 0.0]
        rpy = origin.rpy if origin is not None and origin.rpy is not None else [0.0, 0.0, 0.0]
        frame = kdl.Frame(kdl.Rotation.RPY(*map(float, rpy)), kdl.Vector(*map(float, xyz)))
        if joint.type == "fixed":
            kdl_joint = kdl.Joint(joint.name, kdl.Joint.Fixed)
        else:
            axis = joint.axis if joint.axis is not None else [1.0, 0.0, 0.0]
            axis_in_parent = frame.M * kdl.Vector(*map(float, axis))
            kind = kdl.Joint.TransAxis if joint.type == "prismatic" else kdl.Joint.RotAxis
            kdl_joint = kdl.Joint(joint.name, frame.p, axis_in_parent, kind)
        segments.append(kdl.Segment(joint.child, kdl_joint, frame))
    result = kdl.Chain()
    for segment in segments:
        result.addSegment(segment)
    return result


class KDLPeer(_PeerBase):
    """Orocos KDL ChainIkSolverPos_NR_JL + ChainIkSolverVel_pinv, restarted until the timeout.

    Like MoveIt's KDL plugin: the first attempt starts at the seed, each later one at a uniform
    random in-limit configuration, until ``timeout`` has elapsed (checked between attempts, so
    a call can overrun by one attempt). Each attempt is NR_JL with ``max_iterations`` and
    ``eps = tolerance``. Default 30: with a 5 ms budget, UR5/Panda/TIAGo/PR2 solve more often
    with 30 than with 100 (KDL's default) and far more than with 500 (MoveIt's), since failing
    attempts end sooner. NR_JL clamps joints to their limits; continuous joints get -+FLT_MAX
    (as MoveIt).
    """

    name = "kdl"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        try:
            _import_pykdl()
        except ImportError as error:
            return (
                f"PyKDL not importable ({error}): apt-get install python3-pykdl "
                f"(for Python 3.11, into {DEBIAN_DIST_PACKAGES})"
            )
        return None

    def __init__(self, urdf_xml, base_link, tip_link, timeout, tolerance, max_iterations: int = 30):
        super().__init__(urdf_xml, base_link, tip_link, timeout, tolerance)
        kdl = self._kdl = _import_pykdl()
        self._kdl_chain = kdl_chain(kdl, self._chain)
        n = self._kdl_chain.getNrOfJoints()
        if n != len(self.joint_names):
            raise ValueError(f"KDL chain has {n} joints, expected {len(self.joint_names)}")
        self._max_iterations = int(max_iterations)
        self._fk_solver = kdl.ChainFkSolverPos_recursive(self._kdl_chain)
        self._vel_solver = kdl.ChainIkSolverVel_pinv(self._kdl_chain)
        self._apply_limits()
        self._q_in, self._q_out = kdl.JntArray(n), kdl.JntArray(n)
        self._frame = kdl.Frame()

    def _apply_limits(self) -> None:
        # NR_JL copies the limits when built and has no setter in PyKDL: build it again.
        kdl, n = self._kdl, len(self.joint_names)
        lower, upper = self._solver_limits()
        self._q_min, self._q_max = kdl.JntArray(n), kdl.JntArray(n)
        for i in range(n):
            self._q_min[i], self._q_max[i] = float(lower[i]), float(upper[i])
        self._ik_solver = kdl.ChainIkSolverPos_NR_JL(
            self._kdl_chain,
            self._q_min,
            self._q_max,
            self._fk_solver,
            self._vel_solver,
            self._max_iterations,
            self.tolerance,
        )

    def _to_jnt(self, q, array) -> None:
        for i, value in enumerate(q):
            array[i] = float(value)

    def fk(self, q) -> np.ndarray:
        self._to_jnt(q, self._q_in)
        self._fk_solver.JntToCart(self._q_in, self._frame)
        return self._frame_matrix(self._frame)

    @staticmethod
    def _frame_matrix(frame) -> np.ndarray:
        T = np.eye(4)
        for i in range(3):
            T[i, 3] = frame.p[i]
            for j in range(3):
                T[i, j] = frame.M[i, j]
        return T

    def solve(self, target, seed):
        kdl = self._kdl
        target = np.asarray(target, dtype=float)
        goal = kdl.Frame(kdl.Rotation(*target[:3, :3].ravel().tolist()), kdl.Vector(*target[:3, 3].tolist()))
        deadline = time.perf_counter() + self.timeout
        start = np.asarray(seed, dtype=float)
        while True:
            self._to_jnt(start, self._q_in)
            if self._ik_solver.CartToJnt(self._q_in, goal, self._q_out) >= 0:
                return self._wrap([self._q_out[i] for i in range(len(self.joint_names))])
            if time.perf_counter() >= deadline:
                return None
            start = self._random_q()


# --------------------------------------------------------------------------- Robotics Toolbox


class RTBPeer(_PeerBase):
    """Robotics Toolbox for Python's C++ Levenberg-Marquardt ``ETS.ik_LM`` (Chan's damping).

    ``ik_LM`` has no time budget, so this adapter restarts it (one search of ``max_iterations``,
    default 30 = RTB's own) from the seed, then from uniform random in-limit configurations,
    until ``timeout`` (checked between searches). RTB's own limit check is off (it would reject
    continuous joints outside [-pi, pi]); a result counts if its pose error is within
    ``tol = tolerance**2 / 2`` (RTB's residual E = e.e/2, e = 6-vector of m and rad, so
    |e| <= tolerance) and, continuous joints wrapped, it is within ``lower``/``upper`` (so
    ``set_limits`` needs nothing more here).
    The URDF is parsed with RTB's own parser (private ``_parse_urdf``: public readers want a
    file), minus visual/collision elements, whose meshes it would try to resolve.
    """

    name = "rtb_ik_lm"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        try:
            import roboticstoolbox  # noqa: F401
            from roboticstoolbox.models.URDF.URDFRobot import _parse_urdf  # noqa: F401
        except ImportError as error:
            return f"roboticstoolbox not importable ({error}): pip install roboticstoolbox-python"
        return None

    def __init__(self, urdf_xml, base_link, tip_link, timeout, tolerance, max_iterations: int = 30):
        super().__init__(urdf_xml, base_link, tip_link, timeout, tolerance)
        import roboticstoolbox as rtb
        from roboticstoolbox.models.URDF.URDFRobot import _parse_urdf

        links, robot_name = _parse_urdf(_kinematic_xml(urdf_xml).decode())
        robot = rtb.Robot(links, name=robot_name)
        # An RTB link's ETS includes its own parent joint, so start at the first link below base.
        first = self._chain.joints[0].child if self._chain.joints else tip_link
        ets = robot.ets(start=first, end=tip_link)
        # Joint indices are the whole robot's; the C++ solver reads q[jindex], so renumber 0..n-1
        # (FK in Python ignores jindex, so without this only IK goes wrong).
        for index, element in enumerate(e for e in ets if e.isjoint):
            element.jindex = index
        self._ets = rtb.ETS(list(ets))
        if self._ets.n != len(self.joint_names):
            raise ValueError(f"RTB ETS has {self._ets.n} joints, expected {len(self.joint_names)}")
        rtb_lower, rtb_upper = self._ets.qlim
        bounded = ~self.continuous
        if not (
            np.allclose(rtb_lower[bounded], self.lower[bounded])
            and np.allclose(rtb_upper[bounded], self.upper[bounded])
        ):
            raise ValueError("RTB joint limits (order) differ from the URDF chain's")
        self._max_iterations = int(max_iterations)
        self._tol = 0.5 * self.tolerance**2

    def fk(self, q) -> np.ndarray:
        return np.array(self._ets.eval(np.asarray(q, dtype=float)))

    def solve(self, target, seed):
        target = np.asarray(target, dtype=float)
        deadline = time.perf_counter() + self.timeout
        start = np.asarray(seed, dtype=float)
        while True:
            result = self._ets.ik_LM(
                target, q0=start, ilimit=self._max_iterations, slimit=1, tol=self._tol, joint_limits=False
            )
            if result.success:
                q = self._wrap(result.q)
                if np.all(q >= self.lower - 1e-12) and np.all(q <= self.upper + 1e-12):
                    return q
            if time.perf_counter() >= deadline:
                return None
            start = self._random_q()


# --------------------------------------------------------------------------- registry

PEERS = (TracIKPeer, KDLPeer, RTBPeer)


def available_peers() -> list[tuple[type, str | None]]:
    """Every peer class with None if it can be used here, else why not (and how to install)."""
    return [(peer, peer.unavailable_reason()) for peer in PEERS]


def _self_check(urdf: str, base: str, tip: str, targets: int, timeout: float, tolerance: float) -> None:
    """Solve rate and mean time per call on FK targets of random in-limit configurations."""
    with open(urdf, "rb") as handle:
        xml = handle.read().decode()
    for peer_class, reason in available_peers():
        if reason is not None:
            print(f"{peer_class.name}: unavailable: {reason}")
            continue
        peer = peer_class(xml, base, tip, timeout, tolerance)
        rng = np.random.default_rng(1)
        seed = np.where(peer.continuous, 0.0, (peer.lower + peer.upper) / 2)
        solved, elapsed, worst = 0, 0.0, 0.0
        for _ in range(targets):
            target = peer.fk(rng.uniform(peer.lower, peer.upper))
            start = time.perf_counter()
            q = peer.solve(target, seed)
            elapsed += time.perf_counter() - start
            if q is not None:
                solved += 1
                worst = max(worst, float(np.abs(peer.fk(q) - target).max()))
        print(
            f"{peer.name}: {len(peer.joint_names)} DOF, solved {solved}/{targets}, "
            f"mean {elapsed / targets * 1e3:.3f} ms/call, max |dT| {worst:.1e}"
        )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=_self_check.__doc__)
    parser.add_argument("urdf")
    parser.add_argument("base")
    parser.add_argument("tip")
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=0.005, help="s")
    parser.add_argument("--tolerance", type=float, default=1e-5, help="m and rad")
    arguments = parser.parse_args()
    _self_check(
        arguments.urdf,
        arguments.base,
        arguments.tip,
        arguments.targets,
        arguments.timeout,
        arguments.tolerance,
    )
