"""The ``ik_node`` command (:mod:`.main`: ``info``, ``config``, ``solve``, ``fk``, ``path``,
``reach``, ``node``; also ``python -m ik_node.cli``), what ``info`` and ``config`` compute and
write for a robot (:mod:`.robot_setup`), ``path`` (:mod:`.cartesian_path`), and the options
several subcommands share (:mod:`.arguments`)."""

from .main import SUBCOMMANDS, main

__all__ = ["SUBCOMMANDS", "main"]
