"""The exceptions ik_node raises. Every one derives from :class:`IKNodeError` (and ``ValueError``),
names the offending item (link, joint, parameter, tip) and says what would be valid."""

from __future__ import annotations


class IKNodeError(ValueError):
    """Base class of every error raised by ik_node on bad input."""


class URDFError(IKNodeError):
    """The robot description cannot be used: malformed XML, a broken tree, an invalid joint."""


class UnknownNameError(IKNodeError):
    """A name (of a link, joint, tip...) that the model does not have; lists the known ones."""

    what = "name"

    def __init__(self, name: str, known, what: str | None = None):
        self.name = name
        self.known = sorted(known)
        what = what or self.what
        shown = ", ".join(self.known[:40]) + (" ..." if len(self.known) > 40 else "")
        super().__init__(f"unknown {what} '{name}'; known: [{shown}]")


class UnknownLinkError(UnknownNameError):
    """A link name that is not in the model (or not in the selected base-to-tip tree)."""

    what = "link"


class UnknownJointError(UnknownNameError):
    """A joint name that is not in the model (or not a degree of freedom of the solver)."""

    what = "joint"


class TargetError(IKNodeError):
    """An IK target or seed that cannot be used (NaN, non-orthonormal rotation, wrong size...)."""


class StartStateError(IKNodeError):
    """A path's start configuration that cannot be used: outside the joint limits (names them)."""


class OptionError(IKNodeError):
    """An option's value outside its valid range: ``option`` names it, ``requirement`` says what
    is valid (``must be a positive number``), ``value`` is what was given."""

    def __init__(self, option: str, requirement: str, value):
        self.option, self.requirement, self.value = option, requirement, value
        super().__init__(f"{option} {requirement}, got {value!r}")

    def named(self, option: str) -> OptionError:
        """The same error naming the option as its users know it (a command's ``--flag``)."""
        return OptionError(option, self.requirement, self.value)
