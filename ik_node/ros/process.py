"""The node as a process of its own, for the demo, the tests and the benchmarks: one helper that
starts ``python -m ik_node.ros.node --ros-args ...`` with DDS on this machine, keeps its log, and
stops it with a signal. (It does not import rclpy: the caller talks to the node through topics.)"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..description import share_directory

__all__ = ["NodeProcess", "ros_environment"]

#: Seconds to wait for the node to stop after a signal before it is killed.
STOP_WAIT = 10.0


def ros_environment(base: dict | None = None, domain_id: int | None = None) -> dict:
    """``base`` (default: this process's environment) with DDS kept on this machine
    (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` for Iron and later, and ``ROS_LOCALHOST_ONLY=1``
    where ``ROS_DISTRO`` is ``humble``: Humble reads only that one, Jazzy's rcl warns that it is
    deprecated, so it is removed elsewhere), fast discovery (the Fast DDS profile in ``config/``),
    unbuffered logs, ``domain_id`` when given, and a ``ROS_LOG_DIR`` (a temporary directory
    removed at exit when none is set)."""
    environment = dict(os.environ if base is None else base)
    environment["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    if environment.get("ROS_DISTRO") == "humble":
        environment["ROS_LOCALHOST_ONLY"] = "1"
    else:
        environment.pop("ROS_LOCALHOST_ONLY", None)
    profile = share_directory() / "config" / "fastdds_profile.xml"
    environment.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(profile))
    if domain_id is not None:
        environment["ROS_DOMAIN_ID"] = str(domain_id)
    if not environment.get("ROS_LOG_DIR"):
        environment["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="ik_node_ros_log_")
        atexit.register(shutil.rmtree, environment["ROS_LOG_DIR"], ignore_errors=True)
    environment["PYTHONUNBUFFERED"] = "1"
    environment["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
    return environment


class NodeProcess:
    """``python -m ik_node.ros.node --ros-args <ros_arguments>`` in its own process (renamed to
    ``name`` when not ``ik_node``); stdout and stderr go to a log file in ``ROS_LOG_DIR`` (made if
    it does not exist yet)."""

    def __init__(self, *ros_arguments: str, name: str = "ik_node", environment: dict | None = None):
        self.name = name
        environment = ros_environment() if environment is None else environment
        os.makedirs(environment["ROS_LOG_DIR"], exist_ok=True)  # (as rcl makes it for a node's own log)
        handle, path = tempfile.mkstemp(prefix="ik_node_", suffix=".log", dir=environment["ROS_LOG_DIR"])
        os.close(handle)
        self.log_path = Path(path)
        self._log = self.log_path.open("w")
        arguments = ["--ros-args", *ros_arguments]
        if name != "ik_node":
            arguments += ["-r", f"__node:={name}"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ik_node.ros.node", *arguments],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=environment,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        """Everything the node has printed so far."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def wait_for_log(self, text: str, timeout: float = 10.0) -> bool:
        """Whether ``text`` appears in the log within ``timeout`` seconds (or before the node ends)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return True
            if self.process.poll() is not None:
                return text in self.log()
            time.sleep(0.05)
        return False

    def stop(self, signal_number=signal.SIGINT, timeout: float = STOP_WAIT) -> int:
        """Send ``signal_number`` (killing the node after ``timeout`` s) and return its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal_number)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode
