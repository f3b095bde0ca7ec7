"""The node's servo through real topics (issue 48): twists on ``~/delta_twist_cmds`` realised by
the published commands (the tip's velocity from the robot's own FK of consecutive commands) on
every bundled arm, in the base's and the tip's axes; the limits (positions, velocities,
accelerations from ``joint_limits.<joint>.max_acceleration``) on every command; the stream's
timeout bringing the arm to rest; ``~/status``; bad input (not finite, solve mode, a frame with no
transform, a flood) refused with a status while the node keeps its last good command."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import TwistStamped
from ros_harness import CONFIG_DIR, running_node
from test_servo import well_conditioned

from ik_node import load_robot
from ik_node.description.catalogue import BUNDLED

pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)

RATE = 100.0  # [Hz] the node's publish_rate
#: The arms, their parameter files (config/<name>.yaml), and the twisting tip (the first).
ARMS = {
    case.name: case for case in BUNDLED if case.name in ("arm6", "arm7", "dual_arm", "mobile_manipulator")
}
LINEAR, ANGULAR = np.array([0.03, -0.02, 0.03]), np.array([0.05, 0.06, -0.04])


def well_conditioned_state(robot, case, seed: int) -> dict:
    """:func:`test_servo.well_conditioned` of the case's tree, by joint name."""
    tree = robot.tree(case.base, list(case.tips))
    return dict(zip(tree.joint_names, well_conditioned(tree, seed)))


def track_arguments(name: str) -> tuple[str, ...]:
    """The node's arguments for a bundled robot's parameter file in track mode at :data:`RATE`."""
    return (
        "--params-file",
        str(CONFIG_DIR / f"{name}.yaml"),
        "-p",
        "mode:=track",
        "-p",
        f"publish_rate:={RATE}",
    )


class Streamer:
    """Twists from the test's client node and the node's ``~/status`` recorded."""

    def __init__(self, client):
        self.client = client
        node = client.node
        self.publisher = node.create_publisher(TwistStamped, "/ik_node/delta_twist_cmds", 10)
        self.status: list[tuple[str, str]] = []
        node.create_subscription(
            DiagnosticStatus,
            "/ik_node/status",
            lambda message: self.status.append((message.values[0].value, message.message)),
            100,
        )
        assert client.spin_until(lambda: self.publisher.get_subscription_count() > 0), "no twist subscription"

    def send(self, twist, frame: str = "") -> None:
        message = TwistStamped()
        message.header.frame_id = frame
        message.header.stamp = self.client.node.get_clock().now().to_msg()
        linear, angular = message.twist.linear, message.twist.angular
        linear.x, linear.y, linear.z, angular.x, angular.y, angular.z = (float(x) for x in twist)
        self.publisher.publish(message)

    def stream(self, twist, seconds: float, frame: str = "", rate: float = RATE) -> None:
        """``twist`` at ``rate`` for ``seconds`` while the client spins."""
        end, next_send = time.monotonic() + seconds, 0.0
        while time.monotonic() < end:
            if time.monotonic() >= next_send:
                self.send(twist, frame)
                next_send = time.monotonic() + 1.0 / rate
            self.client.spin_for(0.002)


def command_arrays(commands, names):
    """Positions and velocities (K, n) of joint commands, in ``names`` order."""
    positions = np.array([[dict(zip(c.name, c.position))[name] for name in names] for c in commands])
    velocities = np.array([[dict(zip(c.name, c.velocity))[name] for name in names] for c in commands])
    return positions, velocities


def check_twist_realised(robot, case, names, positions, velocities, axes: str) -> int:
    """Each period of motion realises the twist (no acceleration limits: full speed from the
    first): the twisting tip's velocity by FK of consecutive commands (``names`` their joints)
    within 1 % and 1 degree, linear and angular; the other tips still (<= 0.1 mm a period).
    Returns how many periods were checked."""
    tip = case.tips[0]
    checked = 0
    for k in range(len(positions) - 1):
        if not np.any(velocities[k + 1]):
            continue
        before = robot.forward(dict(zip(names, positions[k])), tip, case.base)
        after = robot.forward(dict(zip(names, positions[k + 1])), tip, case.base)
        rotation = before[:3, :3]
        expected_v = LINEAR if axes == "base" else rotation @ LINEAR
        expected_w = ANGULAR if axes == "base" else rotation @ ANGULAR
        measured_v = (after[:3, 3] - before[:3, 3]) * RATE
        turn = rotation.T @ after[:3, :3]
        angle = math.acos(min(1.0, max(-1.0, (np.trace(turn) - 1) / 2)))
        axis = np.array([turn[2, 1] - turn[1, 2], turn[0, 2] - turn[2, 0], turn[1, 0] - turn[0, 1]])
        measured_w = rotation @ axis / (2 * math.sin(angle)) * angle * RATE
        for measured, expected in ((measured_v, expected_v), (measured_w, expected_w)):
            cosine = measured @ expected / np.linalg.norm(measured) / np.linalg.norm(expected)
            assert math.degrees(math.acos(min(1.0, cosine))) <= 1.0, (k, measured, expected)
            assert np.linalg.norm(measured) == pytest.approx(np.linalg.norm(expected), rel=0.01), k
        for other in case.tips[1:]:
            held = [
                robot.forward(dict(zip(names, positions[i])), other, case.base)[:3, 3] for i in (k, k + 1)
            ]
            assert np.linalg.norm(held[1] - held[0]) <= 1e-4
        checked += 1
    return checked


@pytest.mark.parametrize("name", list(ARMS))
def test_a_constant_twist_is_realised_in_the_base_and_the_tip_axes(name):
    """On each bundled arm: 0.8 s of a constant twist in the base's axes, a pause (the stream's
    timeout stops it), 0.8 s in the tip's axes: at least 40 periods of each realised (see
    :func:`check_twist_realised`); status ``ok`` while streaming, ``stream_timeout`` after."""
    case = ARMS[name]
    robot = load_robot(case.urdf)
    start = well_conditioned_state(robot, case, 4)
    arguments = track_arguments(name)
    with running_node(*arguments, tips=case.tips) as (process, client):
        streamer = Streamer(client)
        names = list(start)
        client.send_joint_state(names, list(start.values()))
        client.spin_for(0.3)
        for axes in ("base", "tip"):
            before = len(client.commands)
            streamer.stream(np.concatenate((LINEAR, ANGULAR)), 0.8, "" if axes == "base" else case.tips[0])
            assert client.spin_until(
                lambda: streamer.status and streamer.status[-1][0] == "stream_timeout"
            ), (
                streamer.status,
                process.log()[-3000:],
            )
            client.spin_for(0.2)
            commands = client.commands[before:]
            command_names = list(commands[0].name)
            positions, velocities = command_arrays(commands, command_names)
            assert not np.any(velocities[-1]), "the arm did not come to rest after the stream"
            checked = check_twist_realised(robot, case, command_names, positions, velocities, axes)
            assert checked >= 40, (checked, len(commands))
        assert ("ok", "") in [(code, "") for code, _ in streamer.status]


def arm7_acceleration_arguments(acceleration: float) -> tuple[str, ...]:
    arguments = []
    for joint in range(1, 8):
        arguments += ["-p", f"joint_limits.joint{joint}.has_acceleration_limits:=true"]
        arguments += ["-p", f"joint_limits.joint{joint}.max_acceleration:={acceleration}"]
    return tuple(arguments)


def test_every_command_within_the_limits_and_the_stream_timeout_brings_rest():
    """arm7 with acceleration limits of 4 rad/s^2 on every joint: a fast twist (0.3 m/s) for 1 s
    then silence: every command within the position limits, the velocity limits and the
    accelerations (consecutive velocities over the period); at rest within the timeout (0.1 s)
    plus the deceleration (max |v| / a) plus 0.1 s of delivery."""
    case = ARMS["arm7"]
    robot = load_robot(case.urdf)
    start = well_conditioned_state(robot, case, 8)
    arguments = track_arguments("arm7")
    with running_node(*arguments, *arm7_acceleration_arguments(4.0)) as (process, client):
        streamer = Streamer(client)
        client.send_joint_state(list(start), list(start.values()))
        client.spin_for(0.3)
        streamer.stream([0.3, 0.0, -0.1, 0.0, 0.0, 0.3], 1.0)
        stopped_at = time.monotonic()
        assert client.spin_until(
            lambda: client.commands and not any(client.commands[-1].velocity), timeout=5.0
        )
        names = list(client.commands[0].name)
        positions, velocities = command_arrays(client.commands, names)
        rest_after = client.command_times[-1] - stopped_at
        tree = robot.tree(case.base, list(case.tips))
        index = [tree.joint_names.index(name) for name in names]
        lower, upper = tree.lower[index], tree.upper[index]
        max_velocity = tree.max_velocity[index]
        assert np.all(positions >= lower - 1e-9) and np.all(positions <= upper + 1e-9)
        assert np.all(np.abs(velocities) <= max_velocity * (1 + 1e-9))
        accelerations = np.abs(np.diff(np.vstack([np.zeros(len(names)), velocities]), axis=0)) * RATE
        assert np.all(accelerations <= 4.0 * (1 + 1e-6)), accelerations.max()
        assert rest_after <= 0.1 + np.abs(velocities).max() / 4.0 + 0.1 + 1.0 / RATE, rest_after


def test_bad_twists_are_refused_and_the_last_good_command_kept():
    """Solve mode: a twist is refused, saying to switch to track mode. Track mode: a twist with a
    NaN, one in a frame without a transform, are refused (status ``refused`` naming the problem)
    while the good stream before them goes on (commands keep moving); a flood of 5000 twists in
    0.5 s: the node keeps up, and once it stops the arm is at rest within the timeout and the
    deceleration (no queue); the log says why jogs are off where control_msgs is missing."""
    case = ARMS["arm7"]
    robot = load_robot(case.urdf)
    start = well_conditioned_state(robot, case, 3)
    with running_node("--params-file", str(CONFIG_DIR / "arm7.yaml"), "-p", f"publish_rate:={RATE}") as (
        process,
        client,
    ):
        streamer = Streamer(client)
        for _ in range(20):  # (best effort: resent while the node's reader has not matched ours yet)
            streamer.send([0.05, 0, 0, 0, 0, 0])
            if client.spin_until(lambda: streamer.status, 0.5):
                break
        assert streamer.status, process.log()[-2000:]
        assert streamer.status[-1][0] == "refused" and "track mode" in streamer.status[-1][1]
        assert not client.commands
        assert client.set_parameters(mode="track").successful
        client.send_joint_state(list(start), list(start.values()))
        client.spin_for(0.3)
        twist = [0.05, 0, 0, 0, 0, 0]
        for bad, frame, words in (
            ([math.nan, 0, 0, 0, 0, 0], "", "not finite"),
            (twist, "nowhere", "nowhere"),
        ):
            streamer.stream(twist, 0.3)
            moving = len(client.commands)
            streamer.send(bad, frame)
            client.spin_for(0.03)  # (depth 1: a good twist right after would replace it unread)
            streamer.stream(twist, 0.05)  # (the good stream goes on: the bad one changed nothing)
            refused = [text for code, text in streamer.status if code == "refused"]
            assert refused and words in refused[-1], streamer.status
            assert len(client.commands) > moving and any(client.commands[-1].velocity)
        if "control_msgs is not importable" not in process.log():
            pytest.fail("control_msgs is importable here: the jog tests belong in test_node_servo")
        started = time.monotonic()
        for _ in range(5000):
            streamer.send(twist)
            if time.monotonic() - started > 0.5:
                break
        flood_end = time.monotonic()
        assert client.spin_until(
            lambda: client.commands and not any(client.commands[-1].velocity), timeout=5.0
        )
        assert client.command_times[-1] - flood_end <= 0.1 + 0.2 + 2.0 / RATE, (
            client.command_times[-1] - flood_end
        )
        assert process.process.poll() is None


def test_a_push_to_full_extension_ends_at_rest_at_the_boundary():
    """arm7's tool position (its orientation free: ``tip_tasks.tool0:=position``) pushed at
    0.2 m/s away from the shoulder for 1.5 s through the topic, then along the boundary's normal
    where it got (a push with a part along the boundary slides along it) for 1.5 s: the arm
    stretches to the boundary of its reach (smallest singular value of the linear rows below
    0.01 m) and slows to rest there while the push goes on (the last commands' joint speeds
    below 0.02 rad/s and falling), the elbow never crossing straight (no branch flip), the tip's
    speed never falling by more than 0.05 m/s in a period (no hard stop)."""
    case = ARMS["arm7"]
    robot = load_robot(case.urdf)
    start = well_conditioned_state(robot, case, 1)
    tree = robot.tree(case.base, list(case.tips))
    q = np.array(list(start.values()))
    point = tree.forward(q, "tool0")[:3, 3]
    shoulder = tree.link_poses(q)[2][:3, 3]
    away = (point - shoulder) / np.linalg.norm(point - shoulder)
    arguments = track_arguments("arm7")
    with running_node(*arguments, "-p", "tip_tasks.tool0:=position") as (process, client):
        streamer = Streamer(client)
        client.send_joint_state(list(start), list(start.values()))
        client.spin_for(0.3)
        streamer.stream(np.concatenate((0.2 * away, np.zeros(3))), 1.5)
        names = list(client.commands[0].name)
        reached = dict(zip(names, command_arrays(client.commands[-1:], names)[0][0]))
        normal = np.linalg.svd(tree.mixed_jacobian(reached, "tool0")[:3])[0][:, -1]
        normal *= np.sign(normal @ away)  # (the boundary's normal there: a push along it stops)
        streamer.stream(np.concatenate((0.2 * normal, np.zeros(3))), 1.5)
        positions, velocities = command_arrays(client.commands, names)
    elbow = names.index("joint4")
    assert np.all(positions[:, elbow] < 0.0), "the elbow crossed straight: a branch flip"
    final = positions[-1]
    linear = tree.body_jacobian(dict(zip(names, final)), "tool0")[:3]
    assert np.linalg.svd(linear, compute_uv=False)[-1] < 0.01
    speeds = np.abs(velocities).max(axis=1)
    assert speeds[-1] < 0.02 and speeds[-1] <= speeds[-50]
    points = np.array([tree.forward(dict(zip(names, p)), "tool0")[:3, 3] for p in positions])
    tip_speeds = np.linalg.norm(np.diff(points, axis=0), axis=1) * RATE
    assert np.max(-np.diff(tip_speeds)) < 0.05
