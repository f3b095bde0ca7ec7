"""What several ``ik_node`` subcommands share: the exit codes, and the chain (``--base``,
``--tip``) with joint values by position and by name."""

from __future__ import annotations

from ..errors import IKNodeError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_NOT_REACHED",
    "EXIT_OK",
    "add_chain_arguments",
    "joint_values",
    "named_values",
]

#: Exit codes.
EXIT_OK, EXIT_NOT_REACHED, EXIT_BAD_INPUT = 0, 1, 2


def add_chain_arguments(command, values_option: str, values_help: str) -> None:
    """``--base``, ``--tip``, and joint values: ``values_option`` (one value per joint, in order;
    ``values_help`` says what they are) and ``--joint NAME=V`` (by name)."""
    chain = command.add_argument_group("chain")
    chain.add_argument("--base", required=True, metavar="LINK", help="base link: poses are in its frame")
    chain.add_argument("--tip", required=True, metavar="LINK", help="tip link")
    values = command.add_argument_group("joint values, in the order fk prints them")
    values.add_argument(values_option, nargs="+", type=float, metavar="V", help=values_help)
    values.add_argument(
        "--joint",
        action="append",
        default=[],
        metavar="NAME=V",
        help="one joint's value by name [rad or m] (repeatable)",
    )


def joint_values(arguments, names, vector) -> dict:
    """Joint values from ``vector`` (``--q``/``--seed``, in order) and ``--joint NAME=V`` (by name)."""
    values = {}
    if vector is not None:
        if len(vector) != len(names):
            raise IKNodeError(f"expected {len(names)} joint values for {list(names)}, got {len(vector)}")
        values.update(zip(names, vector))
    values.update(named_values(arguments.joint, "--joint"))
    return values


def named_values(items: list[str], option: str) -> dict:
    """``NAME=VALUE`` items of ``option`` as ``{name: value}``; a refusal names the option."""
    values = {}
    for item in items:
        name, separator, text = item.partition("=")
        if not separator:
            raise IKNodeError(f"{option} takes NAME=VALUE, got '{item}'")
        try:
            values[name] = float(text)
        except ValueError:
            raise IKNodeError(f"{option} {name}: '{text}' is not a number") from None
    return values
