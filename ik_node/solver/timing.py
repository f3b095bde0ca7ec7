"""Time-optimal timing of a joint path under velocity and acceleration limits, by TOPP-RA
(Pham & Pham 2018, "A new approach to time-optimal path parameterization based on reachability
analysis"; the ``toppra`` package, an optional dependency: ``pip install toppra``).

The path: configurations (m, nq) through which a cubic spline of the joints runs, parameterised
by its cumulative joint-space distance ``s``; TOPP-RA gives the largest ``sdot`` at each point
(from rest to rest) so that every joint stays within ``|qdot| <= v_max`` and
``|qddot| <= a_max``; the time between points is ``2 ds / (sdot_i + sdot_i+1)`` (constant
``sddot`` between them). TOPP-RA checks the limits on a grid (``GRID_PER_STEP`` intervals between
two points of the path), at ``LIMIT_SHARE`` of their value; the timed spline is then checked at
``CHECK_RATE`` and, where it swings past a limit between the grid's points, timed again on a grid
8 times finer, and what still swings past is slowed as a whole by the one factor that brings it
within (velocities ``/ k``, accelerations ``/ k^2``).

Units: rad, m, s.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import IKNodeError

__all__ = ["LIMIT_SHARE", "time_optimal"]

#: The share of each limit the timing uses at the path's points (the rest is for the spline
#: between them; checked at 1 kHz in the tests).
LIMIT_SHARE = 0.98
#: TOPP-RA's grid: this many intervals between two points of the path (the second where the
#: first's spline swings past a limit), and at least MIN_GRID points.
GRID_PER_STEP, MIN_GRID = (4, 32), 100
#: How densely [Hz] the timed spline is checked against the limits (twice the 1 kHz a
#: controller samples it at).
CHECK_RATE = 2000.0


def time_optimal(tree, q: np.ndarray, max_velocity: np.ndarray, max_acceleration: np.ndarray):
    """``(time (m,), velocity (m, nv), acceleration (m, nv), trajectory)`` for the path ``q``
    (m, nq) of ``tree`` (1-DOF joints; the limits per tangent coordinate, finite and > 0);
    ``trajectory(t, order)`` evaluates the timed spline (order 0, 1, 2: positions, velocities,
    accelerations) for checks between the points. Raises :class:`IKNodeError` when toppra is
    missing or the limits are unusable."""
    try:
        import toppra
        import toppra.algorithm
        import toppra.constraint
    except ImportError as error:
        raise IKNodeError(f"timing a path needs toppra ({error}): pip install toppra") from None
    q = np.asarray(q, dtype=float)
    count = len(q)
    velocity_limit = np.broadcast_to(np.asarray(max_velocity, dtype=float), (q.shape[1],))
    acceleration_limit = np.broadcast_to(np.asarray(max_acceleration, dtype=float), (q.shape[1],))
    for name, values in (("max_velocity", velocity_limit), ("max_acceleration", acceleration_limit)):
        if not (np.all(np.isfinite(values)) and np.all(values > 0.0)):
            raise IKNodeError(f"{name} must be finite and > 0 for every joint to time a path, got {values}")
    if any(joint.is_multi_dof for joint in tree.joints):
        raise IKNodeError("timing a path with a floating or planar joint is not supported")
    if count < 2:
        zeros = np.zeros_like(q)
        return np.zeros(count), zeros, zeros, None
    steps = np.linalg.norm(np.diff(q, axis=0), axis=1)
    s = np.concatenate(([0.0], np.cumsum(steps)))
    keep = np.concatenate(([True], steps > 1e-12))  # (repeated points: one)
    s, points = s[keep], q[keep]
    if len(s) < 2:
        zeros = np.zeros_like(q)
        return np.zeros(count), zeros, zeros, None
    spline = toppra.SplineInterpolator(s, points)
    constraints = [
        toppra.constraint.JointVelocityConstraint(
            np.stack((-velocity_limit, velocity_limit), axis=1) * LIMIT_SHARE
        ),
        toppra.constraint.JointAccelerationConstraint(
            np.stack((-acceleration_limit, acceleration_limit), axis=1) * LIMIT_SHARE
        ),
    ]
    for per_step in GRID_PER_STEP:  # (a finer grid where the coarse one's spline swung past a limit)
        timing = _timed(toppra, constraints, spline, s, per_step)
        excess = _excess(timing[-1], velocity_limit, acceleration_limit)
        if excess <= 1.0:
            break
    time, velocity, acceleration, trajectory = timing
    # (back to every point given: a repeated point takes its predecessor's time, at rest there;
    # what still swings past a limit between the grid's points: the whole timing slowed by one
    # factor, velocities / k and accelerations / k^2)
    index = np.cumsum(keep) - 1
    slowed = _Slowed(trajectory, excess)
    return time[index] * excess, velocity[index] / excess, acceleration[index] / excess**2, slowed


def _timed(toppra, constraints, spline, s: np.ndarray, per_step: int):
    """TOPP-RA on the grid of the path's points ``s`` and ``per_step`` intervals between each two
    (at least ``MIN_GRID`` points: a path of two points gets a grid to accelerate on): the time,
    velocity and acceleration at the points, and the timed spline."""
    grid = np.union1d(s, np.linspace(0.0, s[-1], max(MIN_GRID, per_step * (len(s) - 1) + 1)))
    instance = toppra.algorithm.TOPPRA(
        constraints, spline, gridpoints=grid, parametrizer="ParametrizeConstAccel"
    )
    sddot, sdot, _ = instance.compute_parameterization(0.0, 0.0)
    if sdot is None:
        raise IKNodeError("no timing of the path meets the limits (TOPP-RA found none)")
    sdot = np.maximum(sdot, 0.0)
    intervals = 2.0 * np.diff(grid) / np.maximum(sdot[:-1] + sdot[1:], 1e-300)
    at = np.searchsorted(grid, s)  # (the points' places on the grid)
    time = np.concatenate(([0.0], np.cumsum(intervals)))[at]
    speed, change = sdot[at], np.append(sddot, sddot[-1])[at]
    first, second = spline(s, 1), spline(s, 2)
    velocity = first * speed[:, None]
    acceleration = second * (speed**2)[:, None] + first * change[:, None]
    return time, velocity, acceleration, instance.compute_trajectory(0.0, 0.0)


def _excess(trajectory, velocity_limit: np.ndarray, acceleration_limit: np.ndarray) -> float:
    """The factor (>= 1) by which ``trajectory`` must be slowed to keep every limit, checked at
    ``CHECK_RATE``: the largest share of a velocity limit, or the root of an acceleration's."""
    dense = np.linspace(
        0.0, trajectory.duration, max(2, int(math.ceil(trajectory.duration * CHECK_RATE)) + 1)
    )
    return max(
        1.0,
        float(np.max(np.abs(trajectory(dense, 1)) / velocity_limit)),
        math.sqrt(float(np.max(np.abs(trajectory(dense, 2)) / acceleration_limit))),
    )


class _Slowed:
    """A timed spline played ``factor`` times slower: ``timed(t, order)`` is ``spline(t / factor,
    order) / factor^order``; ``duration`` too."""

    def __init__(self, spline, factor: float):
        self.spline, self.factor = spline, factor
        self.duration = spline.duration * factor

    def __call__(self, times, order: int = 0):
        return self.spline(np.asarray(times) / self.factor, order) / self.factor**order
