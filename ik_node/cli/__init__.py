"""The ``ik_node`` command (:mod:`.main`: ``info``, ``config``, ``solve``, ``fk``, ``reach``,
``node``; also ``python -m ik_node.cli``), and what ``info`` and ``config`` compute and write for
a robot (:mod:`.robot_setup`)."""

from .main import SUBCOMMANDS, main

__all__ = ["SUBCOMMANDS", "main"]
