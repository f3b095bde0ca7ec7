"""The README documents what the node declares: every parameter appears in its table."""

from __future__ import annotations

import re

from ros_harness import PACKAGE_ROOT

from ik_node.parameters import JOINT_PARAMETERS, NODE_PARAMETERS, TIP_PARAMETERS


def readme_parameters() -> set[str]:
    text = (PACKAGE_ROOT / "README.md").read_text()
    table = text.split("### Parameters", 1)[1].split("\n\n", 3)[2]
    return set(re.findall(r"^\| `([^`]+)` \|", table, flags=re.MULTILINE))


def test_every_declared_parameter_is_in_the_readme_table_and_nothing_else():
    declared = {spec.name for spec in NODE_PARAMETERS}
    declared |= {spec.name.format("<joint>") for spec in JOINT_PARAMETERS}
    declared |= {spec.name.format("<tip>") for spec in TIP_PARAMETERS}
    documented = readme_parameters()
    assert declared - documented == set(), "declared but not in the README"
    assert documented - declared == set(), "in the README but not declared"
