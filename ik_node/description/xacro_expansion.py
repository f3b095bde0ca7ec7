"""xacro expansion of robot descriptions, for :func:`ik_node.description.urdf_parsing.load_robot`.
No rclpy import.

A description is xacro when its file name ends in ``.xacro`` or its XML (comments aside) holds
xacro markup: ``<xacro:...>`` elements, ``${...}`` or ``$(...)`` substitutions. The ``xmlns:xacro``
declaration alone is not markup: URDFs that xacro generated keep it on ``<robot>``, and they load
as the plain URDFs they are (urdfdom ignores it), with or without xacro installed.
:func:`expand_xacro` expands a xacro document with the ``xacro`` package (PyPI ``xacro``, which
runs without ROS, or ROS's ``ros-$ROS_DISTRO-xacro``) as ``xacro FILE name:=value ...`` would:

* ``xacro_args`` are xacro's ``name:=value`` arguments, read by ``$(arg name)``;
* a file's includes are relative to it; XML text has no path, and xacro resolves its relative
  includes against the current directory;
* ``xacro:`` used without its ``xmlns:xacro`` declaration is declared (xacro itself would refuse
  the document as malformed XML);
* ``$(find PKG)`` (and ``find('PKG')`` inside ``$(eval ...)``) resolve through
  :func:`ik_node.description.resources.find_package`: ``package_paths`` first, then ik_node itself, then the
  ament index.

How ``$(find)`` is hooked: xacro looks packages up in one function,
``xacro.substitution_args._eval_find`` (which imports ``ament_index_python``; PyPI xacro does not
install it). While a document is expanded, that function (and its entry in the table
``$(eval ...)`` reads) is replaced by ours and put back afterwards, under a lock: xacro keeps its
state (file stack, arguments) in module globals, so expansions run one at a time anyway. The
alternatives were worse: a temporary ament index (a prefix directory of marker files prepended to
``AMENT_PREFIX_PATH``) still needs ``ament_index_python`` and changes the environment of every
thread of the process; substituting ``$(find)`` in the text misses the files it includes. With a
xacro whose internals differ (no ``_eval_find``), nothing is replaced and xacro's own lookup (the
ament index) applies.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import xml.dom.minidom
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import URDFError
from .resources import PackageNotFoundError, find_package

__all__ = ["expand_xacro", "has_xacro_markup", "is_xacro", "xacro_arguments"]

#: The namespace xacro documents declare (``xmlns:xacro``).
XACRO_NAMESPACE = "http://www.ros.org/wiki/xacro"
INSTALL_ADVICE = "pip install xacro (or apt install ros-$ROS_DISTRO-xacro)"
_XACRO_MARKUP = re.compile(rb"<\s*xacro:|\$\{|\$\(")
_COMMENT = re.compile(rb"<!--.*?-->", re.DOTALL)
_FIRST_START_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")
#: xacro's state is module-global: one expansion at a time in this process.
_xacro_lock = threading.Lock()


def has_xacro_markup(data: bytes) -> bool:
    """Whether XML ``data`` holds xacro markup outside comments (see the module docstring)."""
    return _XACRO_MARKUP.search(_COMMENT.sub(b"", data)) is not None


def is_xacro(data: bytes, path: Path | None = None) -> bool:
    """Whether a description (its bytes, and its file ``path`` if it came from one) needs xacro."""
    return (path is not None and path.name.lower().endswith(".xacro")) or has_xacro_markup(data)


def expand_xacro(
    data: bytes,
    path: Path | None = None,
    package_paths: Sequence[str | os.PathLike] | None = None,
    xacro_args: Mapping[str, object] | None = None,
) -> bytes:
    """The URDF XML (UTF-8 bytes) a xacro document expands to.

    ``data``: the document's bytes; ``path``: the file they came from (xacro's file stack starts
    there, so its relative includes work), or None for XML text. ``package_paths``:
    directories holding ROS packages, searched by ``$(find PKG)`` before the ament index (see
    :func:`ik_node.description.resources.find_package`). ``xacro_args``: ``{name: value}``, xacro's
    ``name:=value`` arguments (values turned to strings).

    Raises :class:`~ik_node.errors.URDFError`: naming the file and xacro's message when the
    expansion fails (and the included file and macro it failed in); naming the package, the
    places looked in and the remedy when ``$(find PKG)`` finds nothing; saying how to install
    xacro when it is missing. A ``.xacro`` file without any xacro markup loads as it is when
    xacro is not installed.
    """
    source = f"'{path}'" if path is not None else "the xacro XML text"
    arguments = _checked_arguments(xacro_args)
    try:
        import xacro
    except ImportError:
        if not has_xacro_markup(data):
            return data
        raise URDFError(
            f"{source} is a xacro document, but the 'xacro' Python package is not installed: "
            f"{INSTALL_ADVICE}; or expand it first (xacro FILE > robot.urdf)"
        ) from None
    with _xacro_lock, _package_lookup(package_paths):
        try:
            # What xacro.process_file does, from the bytes already read (an undeclared xacro:
            # prefix declared): the file stack anchors relative includes.
            document = xml.dom.minidom.parseString(_with_xacro_namespace(data))
            xacro.init_stacks(None if path is None else str(Path(path).absolute()))
            xacro.process_doc(document, mappings=arguments)
        except Exception as error:  # xacro raises XacroException, ExpatError, NameError...
            raise _expansion_error(error, source, xacro, arguments) from None
        finally:
            includes = getattr(xacro, "all_includes", None)
            if isinstance(includes, list):  # (xacro appends every include to it, forever)
                includes.clear()
    return document.toxml(encoding="utf-8")


def xacro_arguments(items, what: str = "--xacro-arg") -> dict[str, str]:
    """``{name: value}`` from ``NAME:=VALUE`` items (the command line's ``--xacro-arg``, the
    node's ``xacro_args`` parameter, xacro's own syntax); a :class:`URDFError` naming ``what`` and
    the items without ``:=`` or a name."""
    split = [item.partition(":=") for item in items]
    malformed = [name + separator + value for name, separator, value in split if not separator or not name]
    if malformed:
        raise URDFError(f"{what} takes NAME:=VALUE entries, got {malformed}")
    return {name: value for name, _, value in split}


def _checked_arguments(xacro_args) -> dict[str, str]:
    if xacro_args is None:
        return {}
    if not isinstance(xacro_args, Mapping):
        raise URDFError(f"xacro_args must map argument names to values, got {type(xacro_args).__name__}")
    for name in xacro_args:
        if not isinstance(name, str) or not name:
            raise URDFError(f"xacro_args: argument names must be non-empty strings, got {name!r}")
    return {name: str(value) for name, value in xacro_args.items()}


def _with_xacro_namespace(data: bytes) -> bytes:
    """XML text using ``xacro:`` without declaring it (it would not parse) gets the declaration
    on its root element."""
    uses_prefix = re.search(rb"<\s*xacro:|\sxacro:[\w.-]+\s*=", data) is not None
    if not uses_prefix or re.search(rb"xmlns:xacro\s*=", data):
        return data
    declaration = b' xmlns:xacro="' + XACRO_NAMESPACE.encode() + b'"'
    return _FIRST_START_TAG.sub(lambda match: match.group(0) + declaration, data, count=1)


@contextlib.contextmanager
def _package_lookup(package_paths):
    """xacro's ``$(find PKG)`` through :func:`~ik_node.description.resources.find_package` while in
    the block."""
    from xacro import substitution_args

    if not hasattr(substitution_args, "_eval_find"):  # another xacro: its own lookup applies
        yield
        return

    def find(package: str) -> str:
        return str(find_package(package, package_paths))

    table = getattr(substitution_args, "_eval_dict", {})
    saved_function, saved_entry = substitution_args._eval_find, table.get("find")
    substitution_args._eval_find = find
    if "find" in table:
        table["find"] = find
    try:
        yield
    finally:
        substitution_args._eval_find = saved_function
        if "find" in table:
            table["find"] = saved_entry


def _expansion_error(error: BaseException, source: str, xacro, arguments: Mapping[str, str]) -> URDFError:
    """A :class:`URDFError` from a failed expansion: xacro's message, where it failed, and for a
    package not found or an undefined argument what to do."""
    where = _failure_location(xacro)
    missing = _cause(error, PackageNotFoundError)
    if missing is not None:
        return URDFError(f"xacro could not expand {source}{where}: $(find {missing.package}): {missing}")
    unreadable = _cause(error, OSError)
    if unreadable is not None and unreadable.filename:
        message = f"cannot read '{unreadable.filename}' ({unreadable.strerror})"
    else:
        message = re.sub(r"\s*\n\s*", "; ", str(error).strip()) or repr(error)  # (one line)
    if "Undefined substitution argument" in message:
        given = ", ".join(sorted(arguments)) or "none"
        message += f" (pass it in xacro_args, name -> value; given: {given})"
    return URDFError(f"xacro could not expand {source}{where}: {message}")


def _failure_location(xacro) -> str:
    """`` (in FILE, included from ...; in macro NAME)`` from xacro's stacks at the failure (their
    bottom is the document itself), or ''."""
    parts = []
    files = list(getattr(xacro, "filestack", None) or [])
    if len(files) > 1:
        parts.append(f"in '{files[-1]}'" + "".join(f", included from '{name}'" for name in files[-2:0:-1]))
    macros = []
    for macro in getattr(xacro, "macrostack", None) or []:
        try:
            macros.append(macro.body.getAttribute("name"))
        except AttributeError:
            pass
    if macros:
        parts.append("in macro " + " <- ".join(f"'{name}'" for name in reversed(macros)))
    return f" ({'; '.join(parts)})" if parts else ""


def _cause(error: BaseException, kind: type):
    """The first exception of ``kind`` in ``error``'s chain (xacro wraps causes in ``.exc``)."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        pending += [getattr(current, "exc", None), current.__cause__, current.__context__]
    return None
