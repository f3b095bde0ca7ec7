"""Where the package's own files (sample URDFs, configs) are, for source trees and installs."""

from __future__ import annotations

import sys
from pathlib import Path


def share_directory() -> Path:
    """The directory holding ``urdf/``, ``config/`` and ``launch/``.

    A source checkout (or an editable install) uses the repository; a pip install uses
    ``<prefix>/share/ik_node``; a colcon install is found through the ament index.
    """
    candidates = [Path(__file__).resolve().parent.parent, Path(sys.prefix) / "share" / "ik_node"]
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


def resolve_path(location: str) -> Path:
    """A file path from a plain path, ``file://PATH`` or ``package://PACKAGE/RELATIVE`` (the ROS
    convention; ik_node's own files are found without an ament index, other packages through it).

    Raises ``FileNotFoundError`` naming the location when a package cannot be found.
    """
    if location.startswith("file://"):
        return Path(location[len("file://") :])
    if not location.startswith("package://"):
        return Path(location)
    package, _, relative = location[len("package://") :].partition("/")
    if package == "ik_node":
        return share_directory() / relative
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(package)) / relative
    except Exception as error:  # no ament index here, or the package is not in it
        message = f"cannot resolve '{location}': package '{package}' not found ({error})"
        raise FileNotFoundError(message) from None
