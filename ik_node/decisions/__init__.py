"""What the node decides, free of rclpy and of every ROS message package: the node's logic,
tested without ROS; :mod:`ik_node.ros` is the shell around it (topics, services, parameters,
messages). This package imports none of its modules: import the one you need. Its API is the
modules in ``__all__`` (what the shell and the CLI use); the others are their parts.

* :mod:`.policy`: every decision of the node (which goal is solved from which seed, goals kept
  while the solver is prepared, pause and reset, the limit guard), with its parts
  :mod:`.model_state` (the parameters' record, the model in use, its solver, the SRDF and
  obstacles from topics), :mod:`.robot_state` (``/joint_states``, the seed, goal frames),
  :mod:`.motion` (commands, tracking steps, the last command), :mod:`.branch_choice` (the
  ``branch`` parameter) and their answers, :mod:`.replies`;
* :mod:`.planning`: the model a description and the parameters make, and its solver;
  :mod:`.readiness` (the solver attached now or prepared off the executor, with
  :mod:`.preparation`'s thread, and the goals kept meanwhile answered);
* :mod:`.streams`: twists and jogs as they arrive, made the servo's commands
  (:mod:`ik_node.servo`; :mod:`.motion` steps it in track mode);
* :mod:`.compute_ik`: MoveIt's compute_ik answered from the policy, never a command;
  :mod:`.compute_cartesian_path`: MoveIt's compute_cartesian_path, the same way;
* :mod:`.parameters` (the parameter schema), :mod:`.command_line` (the names a command line
  sets), :mod:`.control` (joint-space command logic), :mod:`.conversions` (poses between message
  fields and matrices).
"""

__all__ = [
    "command_line",
    "compute_cartesian_path",
    "compute_ik",
    "control",
    "conversions",
    "parameters",
    "planning",
    "policy",
    "readiness",
    "replies",
    "robot_state",
    "streams",
]
