"""The ROS 2 shell: rclpy and message packages around the node's decisions
(:mod:`ik_node.decisions`, free of rclpy). This package imports none of its modules (nor
rclpy): import the one you need. Its API is the modules in ``__all__``; the others serve the node.
Other packages import :mod:`.node` only inside the function that runs it (importing it imports
rclpy). Every module here imports rclpy or a message package (test/test_layers.py), except
:mod:`.process`, which starts the node.

* :mod:`.node`: the node (rclpy), ``python -m ik_node.ros.node``, and its parts
  :mod:`.node_parameters`, :mod:`.node_commands`, :mod:`.node_feedback`, :mod:`.node_services`;
  :mod:`.messages`, :mod:`.obstacle_messages`, :mod:`.interactive_goals` and
  :mod:`.compute_ik_service` build and read its messages (message packages, no rclpy);
  :mod:`.frames`: TF through tf2 where it is importable;
* :mod:`.process`: the node as a process of its own (for the demo, tests and benchmarks);
  :mod:`.demo`: ``ik_node_demo``, goals sent to the node through real topics.
"""

__all__ = ["demo", "node", "process"]
