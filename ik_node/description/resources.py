"""Where the package's own files (sample URDFs, configs) are, for source trees and installs."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PackageNotFoundError", "bundled_urdf", "find_package", "resolve_path", "share_directory"]


class PackageNotFoundError(FileNotFoundError):
    """A ROS package that neither the given package paths nor the ament index hold.

    ``package`` is its name, ``searched`` lists where it was looked for (one entry a place); the
    message names both and what to do.
    """

    def __init__(self, package: str, searched: Sequence[str]):
        self.package = package
        self.searched = list(searched)
        super().__init__(
            f"ROS package '{package}' not found; looked in: {'; '.join(self.searched)}. Pass "
            f"package_paths (directories holding packages: DIR/{package}/package.xml; the CLI's "
            "--package-path DIR) or source the workspace that installs it (source install/setup.bash)"
        )


def share_directory() -> Path:
    """The directory holding ``urdf/``, ``config/`` and ``launch/``.

    A source checkout (or an editable install) uses the repository; a pip install uses
    ``<prefix>/share/ik_node``; a colcon install is found through the ament index.
    """
    candidates = [Path(__file__).resolve().parents[2], Path(sys.prefix) / "share" / "ik_node"]
    try:
        from ament_index_python.packages import get_package_share_directory

        candidates.append(Path(get_package_share_directory("ik_node")))
    except Exception:  # not a ROS install, or the package is not in the ament index
        pass
    for candidate in candidates:
        if (candidate / "urdf").is_dir():
            return candidate
    raise FileNotFoundError(f"ik_node's share directory not found; looked in {candidates}")


def bundled_urdf(name: str) -> Path:
    """Path of a bundled sample robot, e.g. ``bundled_urdf('arm7')``."""
    return share_directory() / "urdf" / f"{name}.urdf"


def find_package(package: str, package_paths: Sequence[str | os.PathLike] | None = None) -> Path:
    """The directory of ROS package ``package``: what ``$(find package)`` and
    ``package://package/`` stand for.

    Looked for, in this order (the first found wins):

    1. in each directory of ``package_paths``, which *hold* packages: ``DIR/package/`` (a source
       tree's package with its ``package.xml``, or an install's ``share/`` directory); a
       directory that is itself the package (its ``package.xml`` names it) is accepted too;
    2. ik_node itself: its share directory (:func:`share_directory`), found without an index;
    3. the ament index (``AMENT_PREFIX_PATH``, set by sourcing a ROS workspace), through
       ``ament_index_python``: the package's share directory.

    Raises :class:`PackageNotFoundError` naming the package and every place looked in.
    """
    searched = []
    for directory in [Path(entry).absolute() for entry in package_paths or ()]:
        candidate = directory / package
        if candidate.is_dir():
            return candidate
        if _package_xml_names(directory, package):
            return directory
        searched.append(f"{candidate}{'' if directory.is_dir() else f' ({directory} does not exist)'}")
    if not package_paths:
        searched.append("package_paths (none given)")
    if package == "ik_node":
        return share_directory()
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        searched.append("the ament index (ament_index_python is not installed: no ROS 2 sourced)")
        raise PackageNotFoundError(package, searched) from None
    prefixes = [entry for entry in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if entry]
    if not prefixes:
        searched.append("the ament index (AMENT_PREFIX_PATH is not set: no workspace sourced)")
        raise PackageNotFoundError(package, searched)
    try:
        return Path(get_package_share_directory(package))
    except (LookupError, ValueError, OSError):  # not indexed, an invalid name, no index
        searched.append(f"the ament index (AMENT_PREFIX_PATH={os.pathsep.join(prefixes)})")
        raise PackageNotFoundError(package, searched) from None


def _package_xml_names(directory: Path, package: str) -> bool:
    """Whether ``directory/package.xml`` declares ``<name>package</name>``."""
    try:
        text = (directory / "package.xml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(rf"<name>\s*{re.escape(package)}\s*</name>", text) is not None


def resolve_path(location: str, package_paths: Sequence[str | os.PathLike] | None = None) -> Path:
    """A file path from a plain path, ``file://PATH`` or ``package://PACKAGE/RELATIVE`` (the ROS
    convention; the package is found by :func:`find_package`, through ``package_paths`` first,
    then ik_node's own files, then the ament index).

    Raises :class:`PackageNotFoundError` (a ``FileNotFoundError``) naming the location and the
    places looked in when a package cannot be found.
    """
    if location.startswith("file://"):
        return Path(location[len("file://") :])
    if not location.startswith("package://"):
        return Path(location)
    package, _, relative = location[len("package://") :].partition("/")
    try:
        return find_package(package, package_paths) / relative
    except PackageNotFoundError as error:
        error.args = (f"cannot resolve '{location}': {error}",)
        raise
