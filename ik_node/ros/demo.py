"""Demo: start the ik_node node on a bundled robot and send it goals through real ROS 2 topics.

``ik_node_demo`` (what ``bash scripts/demo.sh`` runs) starts the node as a separate process with
``config/<robot>.yaml``, publishes PoseStamped goals — a circle with an orientation sweep, a goal
in another frame of the model, and one goal out of reach — and prints one row per goal: target,
success, position/orientation error (checked again here by an independent FK of the command),
iterations, time and the reason of any failure. ``--plot FILE`` draws the robot at each solution
(needs matplotlib, the ``plot`` extra). DDS stays on this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=
LOCALHOST``). Exit code 0 when every reachable goal was met and the unreachable one was reported.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from ..decisions.conversions import pose_to_fields
from ..description import bundled_urdf, load_robot, share_directory
from ..lie import matrix_to_rpy, rpy_to_matrix
from .process import NodeProcess, ros_environment

#: (robot, base link, tip) the demo drives.
ROBOT, BASE, TIP = "arm7", "base_link", "tool0"
#: Where the demo's circle is centred: a comfortable configuration of the 7-DOF arm [rad].
CENTRE_CONFIGURATION = (0.0, 0.3, 0.0, -1.8, 0.0, 2.1, 0.8)
WAIT = 15.0  # seconds for discovery and for each answer
#: Seconds the demo waits for the node to be ready (a few on a first start after an install: it
#: answers as plain Python while its kernels compile; a loaded machine may take far longer).
READY_WAIT = 300.0
#: The node's tolerance (1e-5 m and rad in config/arm7.yaml) plus rounding of the independent FK.
TOLERANCE = 1e-5 + 1e-9


@dataclass
class Goal:
    label: str
    pose: np.ndarray  # 4x4 in the frame `frame`
    frame: str
    reachable: bool
    pose_in_base: np.ndarray | None = None  # filled when the demo knows the state the node resolves at


@dataclass
class Outcome:
    goal: Goal
    status: dict
    q: np.ndarray | None  # the command, if one came


def demo_goals(robot) -> list[Goal]:
    """A 10 cm circle in the base y-z plane with a +-0.3 rad sweep about the tool axis, a goal
    5 cm along the tool's own z axis given in the tool0 frame, and a goal 3 m away."""
    centre = robot.forward(dict(zip([f"joint{i}" for i in range(1, 8)], CENTRE_CONFIGURATION)), TIP, BASE)
    goals = []
    for index in range(8):
        angle = 2 * math.pi * index / 8
        pose = centre.copy()
        pose[:3, 3] += 0.1 * np.array([0.0, math.cos(angle), math.sin(angle)])
        pose[:3, :3] = pose[:3, :3] @ rpy_to_matrix(0, 0, 0.3 * math.sin(angle))
        goals.append(Goal(f"circle {index + 1}/8", pose, BASE, True, pose))
    along_tool = np.eye(4)
    along_tool[2, 3] = 0.05
    goals.append(Goal("5 cm along tool z", along_tool, TIP, True))
    far = centre.copy()
    far[:3, 3] += [3.0, 0.0, 0.0]
    goals.append(Goal("3 m away", far, BASE, False, far))
    return goals


def run(goals: list[Goal], robot) -> list[Outcome]:
    """Send each goal to the running node, collect its status and command."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PoseStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    rclpy.init()
    client = rclpy.create_node("ik_node_demo")
    commands, statuses = [], []
    client.create_subscription(JointState, "/ik_node/joint_commands", commands.append, 10)
    client.create_subscription(
        DiagnosticArray,
        "/diagnostics",
        lambda message: statuses.extend(
            {value.key: value.value for value in status.values} | {"message": status.message}
            for status in message.status
            if status.name.startswith("ik_node")
        ),
        10,
    )
    publisher = client.create_publisher(PoseStamped, "/ik_node/target_pose", 10)
    ready = []
    client.create_subscription(
        Bool,
        "/ik_node/ready",
        lambda message: ready.append(message.data),
        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL),
    )

    def spin_until(condition, wait: float = WAIT) -> bool:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and not condition():
            rclpy.spin_once(client, timeout_sec=0.02)
        return condition()

    outcomes = []
    try:
        if not spin_until(
            lambda: (
                publisher.get_subscription_count() > 0 and client.count_publishers("/ik_node/joint_commands")
            )
        ):
            raise RuntimeError("the ik_node process was not discovered")
        began = time.monotonic()
        if not spin_until(lambda: ready and ready[-1], 1.0):
            print("the node is preparing its IK solver")
            if not spin_until(lambda: ready and ready[-1], READY_WAIT):
                raise RuntimeError(f"the node was not ready within {READY_WAIT:.0f} s")
            print(f"the node is ready ({time.monotonic() - began:.1f} s)")
        tree = robot.tree(BASE, TIP)
        for goal in goals:
            if goal.pose_in_base is None:  # resolved by the node at its current state: the last command
                q = commands[-1].position if commands else tree.joint_vector({})
                goal.pose_in_base = tree.forward(np.array(q)) @ goal.pose
            message = PoseStamped()
            message.header.frame_id = goal.frame
            message.header.stamp = client.get_clock().now().to_msg()
            position, (x, y, z, w) = pose_to_fields(goal.pose)
            message.pose.position.x, message.pose.position.y, message.pose.position.z = position
            orientation = message.pose.orientation
            orientation.x, orientation.y, orientation.z, orientation.w = x, y, z, w
            before_commands, before_statuses = len(commands), len(statuses)
            publisher.publish(message)
            if not spin_until(lambda count=before_statuses: len(statuses) > count):
                raise RuntimeError(f"no answer to goal '{goal.label}'")
            status = statuses[before_statuses]
            if status["success"] == "true":
                spin_until(lambda count=before_commands: len(commands) > count)
            q = np.array(commands[before_commands].position) if len(commands) > before_commands else None
            outcomes.append(Outcome(goal, status, q))
    finally:
        client.destroy_node()
        rclpy.try_shutdown()
    return outcomes


def report(outcomes: list[Outcome], robot) -> bool:
    """Print the table; True when every reachable goal was met (by an independent FK of the
    command) and every unreachable one reported as such."""
    tree = robot.tree(BASE, TIP)
    header = (
        f"{'goal':<18} {'frame':<10} {'target xyz [m]':<24} {'rpy [rad]':<21} {'ok':<4} "
        f"{'pos err [m]':>11} {'rot err [rad]':>13} {'iter':>5} {'time [ms]':>9}  reason"
    )
    print(header)
    print("-" * len(header))
    all_good = True
    for outcome in outcomes:
        goal, status = outcome.goal, outcome.status
        xyz = " ".join(f"{value:+.3f}" for value in goal.pose[:3, 3])
        rpy = " ".join(f"{value:+.2f}" for value in matrix_to_rpy(goal.pose[:3, :3]))
        success = status["success"] == "true"
        position_error, rotation_error = float(status["position_error"]), float(status["orientation_error"])
        if outcome.q is not None:  # check the command, not the node's word
            reached = tree.forward(outcome.q)
            position_error = float(np.linalg.norm(reached[:3, 3] - goal.pose_in_base[:3, 3]))
            cosine = (np.trace(reached[:3, :3].T @ goal.pose_in_base[:3, :3]) - 1) / 2
            rotation_error = math.acos(min(1.0, max(-1.0, cosine)))
        met = success and outcome.q is not None and max(position_error, rotation_error) <= TOLERANCE
        all_good &= met if goal.reachable else (not success and outcome.q is None)
        print(
            f"{goal.label:<18} {goal.frame:<10} {xyz:<24} {rpy:<21} {'yes' if met else 'no':<4} "
            f"{position_error:>11.2e} {rotation_error:>13.2e} {status['iterations']:>5} "
            f"{float(status['time_ms']):>9.2f}  {status['reason']}"
        )
    return all_good


def plot(outcomes: list[Outcome], robot, path: str) -> None:
    """The robot's links at each solution (3D), the goal path and the goals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tree = robot.tree(BASE, TIP)
    links = [
        joint
        for joint in robot.joints.values()
        if joint.parent in tree.link_names and joint.child in tree.link_names
    ]
    figure = plt.figure(figsize=(8, 7))
    axes = figure.add_subplot(projection="3d")
    solved = [outcome for outcome in outcomes if outcome.q is not None]
    colours = plt.cm.viridis(np.linspace(0, 1, max(len(solved), 1)))
    for colour, outcome in zip(colours, solved):
        poses = {link: tree.forward(outcome.q, link) for link in tree.link_names}
        for joint in links:
            a, b = poses[joint.parent][:3, 3], poses[joint.child][:3, 3]
            axes.plot(*zip(a, b), color=colour, linewidth=2, alpha=0.8)
    goals = np.array([outcome.goal.pose_in_base[:3, 3] for outcome in outcomes if outcome.goal.reachable])
    circle = goals[[*range(8), 0]]  # closed
    axes.plot(*circle.T, "k--", linewidth=1, label="goal path")
    axes.scatter(*goals.T, color="red", s=20, label="goals", depthshade=False)
    axes.set_xlabel("x [m]")
    axes.set_ylabel("y [m]")
    axes.set_zlabel("z [m]")
    axes.set_title(f"ik_node on the bundled {ROBOT}: the arm at each solution ({len(solved)} goals)")
    axes.set_box_aspect((1, 1, 1))
    span = 0.6
    axes.set_xlim(-0.2, span + 0.2)
    axes.set_ylim(-span / 2 - 0.2, span / 2 + 0.2)
    axes.set_zlim(0, span + 0.4)
    axes.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--plot", metavar="FILE.png", help="draw the robot at the solutions (needs matplotlib)"
    )
    arguments = parser.parse_args(argv)
    os.environ.update(ros_environment(domain_id=int(os.environ.get("ROS_DOMAIN_ID", os.getpid() % 100))))
    robot = load_robot(bundled_urdf(ROBOT))
    goals = demo_goals(robot)
    print(
        f"ik_node demo: bundled {ROBOT} ({BASE} -> {TIP}), {len(goals)} goals via /ik_node/target_pose "
        f"(ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, DDS on loopback)\n"
    )
    node_process = NodeProcess("--params-file", str(share_directory() / "config" / f"{ROBOT}.yaml"))
    try:
        outcomes = run(goals, robot)
    except RuntimeError as error:
        print(f"error: {error}\nnode log:\n{node_process.log()}", file=sys.stderr)
        return 1
    finally:
        node_process.stop()
    good = report(outcomes, robot)
    if arguments.plot:
        plot(outcomes, robot, arguments.plot)
    print("\nall reachable goals met; the unreachable one reported" if good else "\nSOME GOALS WERE NOT MET")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
