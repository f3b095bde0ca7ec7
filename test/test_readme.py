"""The documentation matches the code: docs/node.md's parameters table lists exactly what the node
declares; the README stays a five-minute read; its links, and those of docs/, resolve; and every
code block of the README, the CHANGELOG and docs/ is closed (an unmatched fence once swallowed
docs/urdf.md's table of bundled robots)."""

from __future__ import annotations

import re

from ros_harness import PACKAGE_ROOT

from ik_node.decisions.parameters import JOINT_PARAMETERS, NODE_PARAMETERS, TIP_PARAMETERS

NODE_DOC = PACKAGE_ROOT / "docs" / "node.md"
INSTALL_DOC = PACKAGE_ROOT / "docs" / "install.md"
PACKAGE_XML = PACKAGE_ROOT / "package.xml"
README = PACKAGE_ROOT / "README.md"
#: The README is read in five minutes (issue 16).
README_MAX_LINES = 150


def documented_parameters() -> set[str]:
    """The first column of the first table after docs/node.md's "## Parameters" heading."""
    text = NODE_DOC.read_text()
    assert "\n## Parameters\n" in text, "docs/node.md has no '## Parameters' section"
    section = text.split("\n## Parameters\n", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert re.match(r"^\|\s*parameter\s*\|", table[0]), f"not the parameters table: {table[0]}"
    names = [re.match(r"^\| `([^`]+)` \|", line) for line in table[2:]]
    assert all(names), "every row of the parameters table starts with a `name`"
    documented = [match.group(1) for match in names]
    assert len(documented) == len(set(documented)), "a parameter is listed twice"
    return set(documented)


def test_every_declared_parameter_is_in_the_node_doc_table_and_nothing_else():
    declared = {spec.name for spec in NODE_PARAMETERS}
    declared |= {spec.name.format("<joint>") for spec in JOINT_PARAMETERS}
    declared |= {spec.name.format("<tip>") for spec in TIP_PARAMETERS}
    documented = documented_parameters()
    assert declared - documented == set(), "declared but not in docs/node.md's table"
    assert documented - declared == set(), "in docs/node.md's table but not declared"


def test_the_readme_is_short_and_keeps_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "\nbash scripts/demo.sh\n" in text
    assert "\nbash scripts/test.sh\n" in text


def markdown_files() -> list:
    """The README, the CHANGELOG and every page of docs/."""
    files = [README, PACKAGE_ROOT / "CHANGELOG.md", *sorted((PACKAGE_ROOT / "docs").glob("*.md"))]
    return [path for path in files if path.exists()]


def test_relative_links_of_the_readme_and_docs_resolve():
    """Every relative Markdown link (and image) names a file that exists; anchors are not checked."""
    broken = []
    for path in markdown_files():
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if re.match(r"^[a-z]+://", target) or target.startswith("#"):
                continue
            file = target.split("#", 1)[0]
            if not (path.parent / file).exists():
                broken.append(f"{path.relative_to(PACKAGE_ROOT)}: {target}")
    assert broken == []


#: A fence line (CommonMark): up to three spaces, then ``` or ~~~ (three or more), then an info string.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def unbalanced_fences(text: str) -> list[str]:
    """What is wrong with the code fences of a Markdown text: a block never closed, or a fence with
    an info string (```bash) met inside a block, which means a fence above it was left open."""
    problems = []
    opened = None  # (fence, line number) of the block we are in
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if not match:
            continue
        fence, info = match.group(1), match.group(2).strip()
        if opened is None:
            opened = (fence, number)
        elif fence[0] == opened[0][0] and len(fence) >= len(opened[0]) and not info:
            opened = None
        elif info:
            problems.append(f"line {number}: '{line.strip()}' inside the block opened at line {opened[1]}")
    if opened is not None:
        problems.append(f"line {opened[1]}: a code block that is never closed")
    return problems


def test_unbalanced_fences_are_found():
    assert unbalanced_fences("text\n```bash\nls\n```\n\n````\n```\n````\n") == []
    assert unbalanced_fences("## Robots\n\nls\n```\n\n| a | b |\n") == [
        "line 4: a code block that is never closed"
    ]
    assert unbalanced_fences("```bash\nls\n\n```python\nx\n```\n") == [
        "line 4: '```python' inside the block opened at line 1"
    ]


def test_every_code_block_of_the_readme_and_docs_is_closed():
    problems = [
        f"{path.relative_to(PACKAGE_ROOT)}: {problem}"
        for path in markdown_files()
        for problem in unbalanced_fences(path.read_text())
    ]
    assert problems == []


def test_install_md_lists_every_package_xml_dependency_as_apt_installs_it():
    """docs/install.md's "What rosdep installs" block names the apt package of every key of
    package.xml: ``python3-*`` keys as themselves, ROS packages as ``ros-<distro>-name``."""
    keys = re.findall(r"<(?:exec|build|test)?_?depend[^>]*>([^<]+)</", PACKAGE_XML.read_text())
    text = INSTALL_DOC.read_text()
    assert "**What rosdep installs**" in text, "docs/install.md has no 'What rosdep installs' block"
    block = text.split("**What rosdep installs**", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    listed = set(block.split())
    apt = {key if key.startswith("python3-") else f"ros-<distro>-{key.replace('_', '-')}" for key in keys}
    assert sorted(apt - listed) == []
