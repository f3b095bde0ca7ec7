"""ik_node: an ament_python package that also installs with plain pip.

* ``colcon build`` on a ROS 2 install: dependencies come from package.xml (apt/rosdep).
* ``pip install .[ros]``: the ROS 2 Python wheels from PyPI, for machines without a ROS install.
"""

from glob import glob

from setuptools import find_packages, setup

package_name = "ik_node"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.rviz") + glob("config/*.xml")),
        ("share/" + package_name + "/urdf", glob("urdf/*.urdf")),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools", "numpy", "numba>=0.55", "urdfdom-py", "pyyaml"],
    extras_require={
        # The ROS 2 Python wheels, for pip users without a ROS install (never pulled by colcon).
        "ros": [
            "ros-rclpy[fastrtps]",
            "ros-std-msgs",
            "ros-std-srvs",
            "ros-geometry-msgs",
            "ros-sensor-msgs",
            "ros-visualization-msgs",
            "ros-diagnostic-msgs",
            "ros-trajectory-msgs",
        ],
        # Jazzy's ROS 2 Python wheels instead of the ones above (a venv of its own: both install the
        # same modules). scripts/test.sh runs the node tests on them too.
        "ros-jazzy": [
            "ros-jazzy-rclpy[fastrtps]",
            "ros-jazzy-std-msgs",
            "ros-jazzy-std-srvs",
            "ros-jazzy-geometry-msgs",
            "ros-jazzy-sensor-msgs",
            "ros-jazzy-visualization-msgs",
            "ros-jazzy-diagnostic-msgs",
            "ros-jazzy-trajectory-msgs",
            "ros-jazzy-rcl-interfaces",
            "ros-jazzy-builtin-interfaces",
        ],
        # Timing straight-line paths (IKSolver.cartesian_path with max_acceleration): TOPP-RA.
        "paths": ["toppra"],
        "test": [
            "toppra",  # timed paths (test_cartesian.py)
            # (pytest 9.2's node IDs silently undo pytest-xdist 3.8's --dist loadgroup, which
            # scripts/test.sh uses: pytest-dev/pytest-xdist#1386; 9.1 groups)
            "pytest<9.2",
            "pytest-xdist",
            "pytest-timeout",
            "ros-domain-coordinator",
            "hypothesis",
            "ruff",
            "pin",
            "example-robot-data",
            "matplotlib",
            "transforms3d",  # an independent reference in the tests; ik_node.lie has its own
            "xacro",
            # reachability maps' tests (test_reach.py): HDF5 files and a Dask LocalCluster
            "h5py",
            "dask[distributed]",
            # collision models' tests (test_collision.py): meshes (pycollada: trimesh's DAE reader;
            # scipy: trimesh's convex hulls)
            "trimesh",
            "pycollada",
            "scipy",
            # every solution's tests (test_closed_form.py): EAIK, an independent closed-form IK
            # (BSD-3; pulls urchin, pyglet and PyOpenGL for its URDF reader, unused there)
            "eaik",
        ],
        "plot": ["matplotlib"],
        # Collision models (ik_node.collision): reading STL, OBJ and (pycollada) DAE meshes, and
        # their convex hulls (scipy's qhull, through trimesh).
        "collision": ["trimesh", "pycollada", "scipy"],
        # Reachability maps (ik_node reach): HDF5 files (Reuleaux's layout), Dask clusters,
        # pictures and a progress bar.
        "reach": ["h5py", "dask[distributed]", "matplotlib", "tqdm"],
        # Robot descriptions written in xacro (load_robot expands them); ROS installs have it.
        "xacro": ["xacro"],
    },
    zip_safe=True,
    maintainer="ik_node maintainers",
    maintainer_email="maintainers@ik-node.invalid",
    description="Inverse kinematics for URDF robots: a library and a ROS 2 node.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "ik_node = ik_node.cli:main",
            "ik_node_demo = ik_node.ros.demo:main",
        ],
    },
)
