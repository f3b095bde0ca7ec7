"""The ROS 2 layer, and the rclpy-free logic beside it. This package imports none of its modules
(nor rclpy): import the one you need. Its API is the modules in ``__all__``; the others serve
the node. Other packages import :mod:`.node` only inside the function that runs it (importing it
imports rclpy).

* :mod:`.node`: the node (rclpy), ``python -m ik_node.ros.node``, and its parts
  :mod:`.node_parameters`, :mod:`.node_commands`, :mod:`.node_feedback`, :mod:`.node_services`,
  :mod:`.node_readiness`; :mod:`.messages`, :mod:`.obstacle_messages`, :mod:`.interactive_goals`
  and :mod:`.compute_ik_service` build and read its messages (message packages, no rclpy);
  :mod:`.frames`: TF through tf2 where it is importable;
* free of rclpy: :mod:`.policy` (every decision of the node, with its parts :mod:`.model_state`,
  :mod:`.planning`, :mod:`.robot_state`, :mod:`.motion`, :mod:`.branch_choice` and their answers,
  :mod:`.replies`), :mod:`.compute_ik` (MoveIt's compute_ik answered from the policy),
  :mod:`.parameters` (the parameter schema), :mod:`.control` (joint-space command logic),
  :mod:`.conversions` (poses between message fields and matrices), :mod:`.preparation` (the
  solver built off the executor thread);
* :mod:`.process`: the node as a process of its own (for the demo, tests and benchmarks);
  :mod:`.demo`: ``ik_node_demo``, goals sent to the node through real topics.
"""

__all__ = ["control", "conversions", "demo", "node", "parameters", "policy", "process"]
