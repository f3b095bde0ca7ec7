"""Demo on a bundled robot: load the 7-DOF arm, print forward kinematics and its body Jacobian.

Run ``ik_node_demo`` (or ``python -m ik_node.demo``); ``--urdf/--base/--tip`` pick another robot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from . import load_robot
from .errors import IKNodeError
from .lie import so3_log
from .resources import bundled_urdf


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", default=str(bundled_urdf("arm7")))
    parser.add_argument("--base", default="base_link")
    parser.add_argument("--tip", default="tool0")
    arguments = parser.parse_args(argv)
    try:
        tree = load_robot(arguments.urdf).tree(arguments.base, arguments.tip)
    except IKNodeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    q = np.where(np.isfinite(tree.lower), 0.5 * (tree.lower + tree.upper), 0.0)
    print(
        f"{Path(arguments.urdf).name}: {arguments.base} -> {arguments.tip}, joints {list(tree.joint_names)}"
    )
    print(f"q (mid-range) = {q}")
    pose = tree.forward(q)
    print(f"tip position [m] = {pose[:3, 3]}, rotation vector [rad] = {so3_log(pose[:3, :3])}")
    print("T_base_tip =\n" + str(pose))
    print("body Jacobian [v; w] (tip frame) =\n" + str(tree.body_jacobian(q)))
    singular_values = np.linalg.svd(tree.body_jacobian(q), compute_uv=False)
    print(f"singular values = {singular_values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
