"""Classes and functions of ik_node by length: the ones over the sizes a person reads in one sitting.

Usage: python scripts/code_sizes.py [--root DIR] [--class-lines N] [--function-lines N]

Reads every ``*.py`` under ``DIR/ik_node`` (default: this checkout) with the ``ast`` module (no
imports, nothing run) and prints the classes longer than ``--class-lines`` (default 300) and the
functions and methods longer than ``--function-lines`` (default 80), longest first, each with
its file and first line; then the counts. A length is the node's lines from its ``def`` or
``class`` line (decorators excluded) to its last line, docstrings and comments included.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def _definitions(node, prefix: str, where: Path):
    """(lines, qualified name, "path:line", is a class) of every class and function in ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{child.name}"
            lines = child.end_lineno - child.lineno + 1
            yield lines, name, f"{where}:{child.lineno}", isinstance(child, ast.ClassDef)
            yield from _definitions(child, name + ".", where)


def sizes(package: Path) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    """(classes, functions): (lines, qualified name, "path:line") of every class and function."""
    classes, functions = [], []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for lines, name, where, is_class in _definitions(tree, "", path.relative_to(package.parent)):
            (classes if is_class else functions).append((lines, name, where))
    return classes, functions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--class-lines", type=int, default=300)
    parser.add_argument("--function-lines", type=int, default=80)
    arguments = parser.parse_args()
    classes, functions = sizes(arguments.root / "ik_node")
    for label, entries, limit in (
        ("classes", classes, arguments.class_lines),
        ("functions", functions, arguments.function_lines),
    ):
        over = sorted((entry for entry in entries if entry[0] > limit), reverse=True)
        print(f"{label} over {limit} lines: {len(over)} of {len(entries)}")
        for lines, name, where in over:
            print(f"  {lines:5d}  {name}  ({where})")


if __name__ == "__main__":
    main()
