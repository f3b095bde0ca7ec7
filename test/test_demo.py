"""The README's main command: the demo starts the node, sends goals through real topics, prints
a table, draws a picture, exits 0 and leaves no process behind."""

from __future__ import annotations

import struct
import subprocess
import sys
import uuid
from pathlib import Path

from ros_harness import PACKAGE_ROOT, ros_environment


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # gone, or not ours
                pass
    return found


def test_demo_meets_every_reachable_goal_reports_the_unreachable_one_and_draws(tmp_path):
    marker = f"IK_NODE_DEMO_TEST={uuid.uuid4()}"
    environment = ros_environment()
    environment[marker.split("=")[0]] = marker.split("=")[1]
    environment["ROS_LOG_DIR"] = str(tmp_path / "logs" / "not made yet")  # (a new one: made, as ROS does)
    picture = tmp_path / "demo.png"
    finished = subprocess.run(
        [sys.executable, "-m", "ik_node.ros.demo", "--plot", str(picture)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=PACKAGE_ROOT,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    rows = {line[:18].strip(): line.split() for line in finished.stdout.splitlines() if line[:1].isalnum()}
    reachable = [f"circle {index}/8" for index in range(1, 9)] + ["5 cm along tool z"]
    for label in reachable:
        row = rows[label]
        assert "yes" in row and row[-1] == "success", row
    unreachable = rows["3 m away"]
    assert "no" in unreachable and unreachable[-1] == "unreachable", unreachable
    assert "all reachable goals met" in finished.stdout
    assert processes_with(marker) == [], "the demo left a process behind"

    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 600 and height >= 500
