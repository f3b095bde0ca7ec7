"""The parameter names a node's command line sets (``-p`` and ``--params-file``), read without
rclpy: so that entries for joints or tips the chain does not have are named in a warning rather
than silently ignored (:class:`ik_node.ros.node_parameters.NodeParameters`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import yaml

__all__ = ["overridden_names"]


def overridden_names(ros_arguments: Iterable[str], node_name: str = "ik_node") -> set[str]:
    """The parameter names a command line's ``--ros-args`` set for ``node_name``: ``-p NAME:=VALUE``
    and the entries of ``--params-file`` files (under ``/**``, ``node_name`` or ``/node_name``),
    nested keys joined with dots. (So that entries for joints the chain does not have are named,
    not silently ignored.)"""
    names: set[str] = set()
    arguments = list(ros_arguments)
    for flag, value in zip(arguments, arguments[1:]):
        if flag in ("-p", "--param") and ":=" in value:
            names.add(value.split(":=", 1)[0].split(":")[-1])
        elif flag == "--params-file":
            try:
                with open(value) as stream:
                    document = yaml.safe_load(stream) or {}
            except (OSError, yaml.YAMLError):
                continue  # rclpy reports an unreadable file itself
            for key, section in document.items() if isinstance(document, dict) else ():
                if key in ("/**", node_name, f"/{node_name}") and isinstance(section, dict):
                    names |= set(_flatten(section.get("ros__parameters", {})))
    return names


def _flatten(tree: Mapping, prefix: str = "") -> Iterable[str]:
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"
