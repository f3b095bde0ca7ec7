"""The shipped launch file (launch/ik_node.launch.py).

* Its set-up (``launch_setup``: which nodes start, ik_node's parameters and remappings, the
  errors), for each set of arguments a user passes: plain Python, run everywhere.
* Run the way ``ros2 launch`` runs it (launch's ``LaunchService``, with ``use_rviz:=false``), in
  both set-ups: **beside a running robot** (a stand-in robot publishes ``/joint_states``: no
  robot_state_publisher starts, nothing but the robot publishes on ``/joint_states``, no command
  before a goal, the goal is seeded from the robot's joint states and its trajectory reaches the
  controller's topic) and **the demo** (robot_state_publisher starts, ik_node's steady joint state
  reaches ``/joint_states``, a goal's command reaches the forward position controller's topic);
  and ``urdf_file`` without ``params_file`` stops the launch with the error.

The runs need a ROS 2 install: ``launch`` and ``launch_ros`` importable, ik_node (and for the demo
robot_state_publisher) in the ament index (``colcon build`` of this package). Elsewhere they skip
and say what is missing: neither launch package is installable from PyPI.
"""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest
import yaml
from ros_harness import PACKAGE_ROOT, Client

from ik_node import load_robot

LAUNCH_FILE = PACKAGE_ROOT / "launch" / "ik_node.launch.py"
ARM7_URDF = PACKAGE_ROOT / "urdf" / "arm7.urdf"
ARM7_CONFIG = PACKAGE_ROOT / "config" / "arm7.yaml"
JOINTS = [f"joint{index}" for index in range(1, 8)]
Q_GOAL = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
#: The stand-in robot's measured joint positions [rad].
Q_ROBOT = np.array([0.1, 0.3, -0.2, -1.5, 0.2, 1.2, -0.3])
STARTUP = 30.0  # s: the processes start, load the kernels' cache and discover each other
READY = 180.0  # s: until the node solves (a cold kernel cache compiles first)
POSITION_TOPIC = "/forward_position_controller/commands"
TRAJECTORY_TOPIC = "/joint_trajectory_controller/joint_trajectory"


def load_launch_file():
    spec = importlib.util.spec_from_file_location("ik_node_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


launch_file = load_launch_file()


def setup(**arguments):
    """The launch file's set-up for ``arguments``, the package's files from the source tree."""
    return launch_file.launch_setup(arguments, PACKAGE_ROOT)


# ---------------------------------------------------------------- the set-up, from the arguments


def test_a_bundled_robot_is_a_demo_with_robot_state_publisher_rviz_and_joint_states():
    started = setup()
    assert started.urdf_file == str(ARM7_URDF) and started.params_file == str(ARM7_CONFIG)
    assert started.robot_state_publisher and started.rviz
    assert started.remappings == (("~/joint_states", "/joint_states"),)
    assert started.node_parameters == {"publish_rest_posture_at_start": True}
    assert started.fixed_frame == "base_link"
    dual = setup(robot="dual_arm")
    assert dual.urdf_file.endswith("dual_arm.urdf") and dual.params_file.endswith("dual_arm.yaml")


def test_beside_a_running_robot_nothing_goes_on_joint_states_and_no_second_robot_state_publisher():
    """Your own description: the robot's bringup runs robot_state_publisher and owns
    /joint_states; ik_node sends no command before a goal."""
    for arguments in (
        {"urdf_file": str(ARM7_URDF), "params_file": str(ARM7_CONFIG)},
        {"params_file": str(ARM7_CONFIG)},  # the description its file names, else /robot_description
        {"demo": "false"},  # a bundled robot made to stand beside one
    ):
        started = setup(**arguments)
        assert not started.robot_state_publisher, arguments
        assert started.remappings == (), arguments
        assert "publish_rest_posture_at_start" not in started.node_parameters, arguments
        assert started.rviz, arguments  # (RViz shows the robot through its own robot_state_publisher)
    assert setup(params_file=str(ARM7_CONFIG)).urdf_file is None
    assert setup(urdf_file=str(ARM7_URDF), params_file=str(ARM7_CONFIG), use_rviz="false").rviz is False


def test_demo_with_your_own_description_and_each_half_of_demo_overridden():
    own = {"urdf_file": str(ARM7_URDF), "params_file": str(ARM7_CONFIG)}
    demo = setup(**own, demo="true")
    assert demo.robot_state_publisher and demo.remappings == (("~/joint_states", "/joint_states"),)
    no_publisher = setup(**own, demo="true", use_robot_state_publisher="false")
    assert not no_publisher.robot_state_publisher and no_publisher.remappings
    publisher_only = setup(**own, use_robot_state_publisher="true")  # a bringup without one
    assert publisher_only.robot_state_publisher and publisher_only.remappings == ()
    states_only = setup(**own, publish_joint_states="1")
    assert not states_only.robot_state_publisher
    assert states_only.remappings == (("~/joint_states", "/joint_states"),)


@pytest.mark.parametrize(
    ("output", "topic", "parameter"),
    [
        ("joint_state", "~/joint_commands", None),
        ("position", "~/position_commands", "publish_position_commands"),
        ("trajectory", "~/joint_trajectory", "publish_trajectory"),
    ],
)
def test_the_command_output_is_selected_and_remapped_to_the_controller(output, topic, parameter):
    started = setup(params_file=str(ARM7_CONFIG), command_output=output, command_topic="/controller/in")
    assert started.remappings == ((topic, "/controller/in"),)
    assert started.node_parameters == ({} if parameter is None else {parameter: True})
    unmapped = setup(params_file=str(ARM7_CONFIG), command_output=output)
    assert unmapped.remappings == ()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"urdf_file": "/robots/mine.urdf"},
            r"urdf_file:=/robots/mine.urdf needs params_file:=\.\.\. .*"
            r"ros2 run ik_node ik_node config --urdf /robots/mine.urdf --base BASE --tip TIP",
        ),
        (
            {"params_file": str(ARM7_CONFIG), "use_robot_state_publisher": "true"},
            "robot_state_publisher needs the description: pass urdf_file",
        ),
        ({"params_file": str(ARM7_CONFIG), "demo": "true"}, "robot_state_publisher needs the description"),
        ({"demo": "maybe"}, "demo:=maybe: expected one of true, false, auto"),
        ({"use_rviz": "auto"}, "use_rviz:=auto: expected one of true, false$"),
        (
            {"command_output": "effort"},
            "command_output:=effort: expected one of joint_state, position, trajectory",
        ),
        ({"robot": "ur5"}, "robot:=ur5: expected one of arm6, arm7, mobile_manipulator, dual_arm, humanoid"),
        ({"params_file": "/no/such.yaml"}, r"params_file:=/no/such.yaml: cannot read it \(No such file"),
    ],
)
def test_inconsistent_arguments_stop_the_launch_saying_what_to_pass(arguments, message):
    with pytest.raises(ValueError, match=message):
        setup(**arguments)


def test_every_launch_argument_is_in_the_node_doc():
    text = (PACKAGE_ROOT / "docs" / "node.md").read_text()
    missing = [name for name, _, _ in launch_file.ARGUMENTS if f"`{name}`" not in text]
    assert missing == []


# ---------------------------------------------------------------- run by launch's LaunchService


def missing_requirements(packages=("ik_node",)) -> str | None:
    missing = [name for name in ("launch", "launch_ros") if importlib.util.find_spec(name) is None]
    if missing:
        return f"{missing} cannot be imported here (not on PyPI); the launch file needs a ROS 2 install"
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    for package in packages:
        try:
            get_package_prefix(package)
        except PackageNotFoundError:
            return f"package '{package}' is not in the ament index (AMENT_PREFIX_PATH): build and source it"
    return None


needs_launch = pytest.mark.skipif(missing_requirements() is not None, reason=str(missing_requirements()))
needs_robot_state_publisher = pytest.mark.skipif(
    missing_requirements(("ik_node", "robot_state_publisher")) is not None,
    reason=str(missing_requirements(("ik_node", "robot_state_publisher"))),
)


def launch_service(arguments: dict):
    """A LaunchService that runs the launch file with ``arguments``, as ``ros2 launch`` does."""
    from launch import LaunchDescription, LaunchService
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    service = LaunchService(noninteractive=True)
    source = PythonLaunchDescriptionSource(str(LAUNCH_FILE))
    service.include_launch_description(
        LaunchDescription([IncludeLaunchDescription(source, launch_arguments=list(arguments.items()))])
    )
    return service


def run_launch(arguments: dict, checks) -> int:
    """Run the launch file with ``arguments`` (in the main thread: LaunchService must) while
    ``checks(client)`` runs beside it with a client node, then shut it down. Returns the
    service's exit status; re-raises what the checks raised."""
    service = launch_service(arguments)
    outcome: dict = {}

    def exercise():
        client = Client()
        try:
            checks(client)
            outcome["passed"] = True
        except BaseException as error:  # re-raised in the test's thread
            outcome["error"] = error
        finally:
            client.close()
            service.shutdown()

    thread = threading.Thread(target=exercise, daemon=True)
    thread.start()
    status = service.run()
    thread.join(timeout=20.0)
    if "error" in outcome:
        raise outcome["error"]
    assert outcome.get("passed"), f"the checks did not finish (launch service status {status})"
    return status


def node_names(client) -> set[str]:
    return {name for name, _ in client.node.get_node_names_and_namespaces()}


@needs_launch
def test_beside_a_running_robot(ros_context, tmp_path):
    """A stand-in robot publishes its measured joint states at 20 Hz; the launch adds ik_node
    (no robot_state_publisher), which publishes nothing on /joint_states and commands nothing
    before a goal, and seeds the goal from the robot: a goal at the robot's own tool pose is
    answered with the robot's positions, and its trajectory reaches the controller's topic."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    arm7 = load_robot(ARM7_URDF)
    # The stand-in robot publishes from this process, beside the launch service: on a loaded
    # machine its joint states can pause for about a second (measured), past the default
    # joint_state_timeout (1 s), after which the node seeds from its last command by design.
    parameters = yaml.safe_load(ARM7_CONFIG.read_text())
    parameters["/**"]["ros__parameters"]["joint_state_timeout"] = 10.0
    params_file = tmp_path / "arm7.yaml"
    params_file.write_text(yaml.safe_dump(parameters))

    def checks(client):
        states, trajectories = [], []
        client.node.create_subscription(JointState, "/joint_states", states.append, 100)
        client.node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, trajectories.append, 10)
        client.node.create_timer(0.05, lambda: client.send_joint_state(JOINTS, Q_ROBOT))
        client.wait_connected(timeout=STARTUP)
        client.wait_ready(timeout=READY)
        client.spin_for(1.0)
        assert "robot_state_publisher" not in node_names(client) and "ik_node" in node_names(client)
        writers = {info.node_name for info in client.node.get_publishers_info_by_topic("/joint_states")}
        assert writers == {client.node.get_name()}, f"/joint_states publishers: {writers}"
        assert states and all(np.array_equal(state.position, Q_ROBOT) for state in states)
        assert client.commands == [] and trajectories == [], "a command before any goal"
        assert client.node.count_publishers("/ik_node/joint_states") == 1  # (its own, not remapped)
        client.send_goal(arm7.forward(dict(zip(JOINTS, Q_ROBOT)), "tool0", "base_link"))
        command = client.wait_command(0)
        assert command is not None, "no command for the goal"
        np.testing.assert_allclose(command.position, Q_ROBOT, atol=1e-9)  # seeded from the robot
        assert client.spin_until(lambda: trajectories), f"nothing on {TRAJECTORY_TOPIC}"
        assert list(trajectories[-1].joint_names) == JOINTS
        np.testing.assert_array_equal(trajectories[-1].points[0].positions, command.position)
        assert all(np.array_equal(state.position, Q_ROBOT) for state in states)

    arguments = {
        "urdf_file": str(ARM7_URDF),
        "params_file": str(params_file),
        "use_rviz": "false",
        "command_output": "trajectory",
        "command_topic": TRAJECTORY_TOPIC,
    }
    run_launch(arguments, checks)


@needs_launch
def test_params_file_alone_takes_the_robots_description_from_its_topic(ros_context, tmp_path):
    """A parameter file that names no description, beside a robot: ik_node loads the one the
    robot's robot_state_publisher publishes on /robot_description (transient local) and solves."""
    from std_msgs.msg import String

    arm7 = load_robot(ARM7_URDF)
    parameters = yaml.safe_load(ARM7_CONFIG.read_text())
    del parameters["/**"]["ros__parameters"]["robot_description_file"]
    params_file = tmp_path / "no_description.yaml"
    params_file.write_text(yaml.safe_dump(parameters))

    def checks(client):
        client.description_publisher.publish(String(data=ARM7_URDF.read_text()))  # (the robot's)
        client.node.create_timer(0.05, lambda: client.send_joint_state(JOINTS, Q_ROBOT))
        client.wait_connected(timeout=STARTUP)
        client.wait_ready(timeout=READY)
        client.send_goal(arm7.forward(dict(zip(JOINTS, Q_GOAL)), "tool0", "base_link"))
        command = client.wait_command(0)
        assert command is not None, "no command for the goal"
        assert list(command.name) == JOINTS

    run_launch({"params_file": str(params_file), "use_rviz": "false"}, checks)


@needs_robot_state_publisher
def test_the_demo_feeds_joint_states_and_the_controller(ros_context):
    """A bundled robot: robot_state_publisher starts, the steady joint state reaches
    /joint_states (the rest posture before any goal), a goal gets a command that reaches it, the
    joint state follows it and the forward position controller's topic gets the same positions."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    arm7 = load_robot(ARM7_URDF)

    def checks(client):
        states, arrays = [], []
        client.node.create_subscription(JointState, "/joint_states", states.append, 10)
        client.node.create_subscription(Float64MultiArray, POSITION_TOPIC, arrays.append, 10)
        client.wait_connected(timeout=STARTUP)
        assert client.spin_until(lambda: states, timeout=STARTUP), "no steady joint state on /joint_states"
        assert list(states[0].name) == JOINTS
        assert client.spin_until(lambda: "robot_state_publisher" in node_names(client), timeout=STARTUP)
        client.wait_ready(timeout=READY)
        goal = arm7.forward(dict(zip(JOINTS, Q_GOAL)), "tool0", "base_link")
        before = len(client.commands)
        client.send_goal(goal)
        command = client.wait_command(before)
        assert command is not None, "no command for the goal"
        reached = arm7.forward(dict(zip(command.name, command.position)), "tool0", "base_link")
        assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) <= 1e-5
        assert client.spin_until(lambda: np.allclose(states[-1].position, command.position))
        assert client.spin_until(lambda: arrays and np.array_equal(arrays[-1].data, command.position))

    arguments = {"use_rviz": "false", "command_output": "position", "command_topic": POSITION_TOPIC}
    run_launch(arguments, checks)


@needs_launch
def test_urdf_file_without_params_file_stops_the_launch_with_the_reason(caplog, capfd):
    """launch logs the error ("Caught exception in launch ...": to the screen, or through Python
    logging where its logger propagates) and exits with status 1."""
    assert launch_service({"urdf_file": str(ARM7_URDF)}).run() != 0
    output = caplog.text + "".join(capfd.readouterr())
    assert f"urdf_file:={ARM7_URDF} needs params_file:=" in output
    assert "ik_node-" not in output  # no process was started
