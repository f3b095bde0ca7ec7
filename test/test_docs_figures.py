"""One figure for each number (issue 27): the headline figures (cold compile, first answers,
start-up, the demo and test times, ...) live in one table of docs/performance.md, each with the
benchmark that measured it. Every place that quotes one says the same value: the README (which
must quote the start-up figures), the other pages, the CHANGELOG's Unreleased section (earlier
sections are history, dated), and the notices the program prints (``jit.COLD_COMPILE``)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
from ros_harness import PACKAGE_ROOT

README = PACKAGE_ROOT / "README.md"
PERFORMANCE = PACKAGE_ROOT / "docs" / "performance.md"
CHANGELOG = PACKAGE_ROOT / "CHANGELOG.md"
HEADLINE_HEADING = "\n## Headline figures\n"

#: A number as the docs write it (thousands with commas), then its unit.
_NUMBER = r"\d{1,3}(?:,\d{3})*(?:\.\d+)?"
_SECONDS = rf"{_NUMBER} s"
#: figure -> patterns that find a quote of it; each pattern's one group is the value as quoted.
QUOTES = {
    "cold_compile": [rf"about ({_SECONDS}) on 2 cores", rf"compiled kernels about ({_SECONDS}) later"],
    "cold_compile_cpu": [rf"({_NUMBER}) CPU s\b", rf"after: ({_SECONDS}) over \d+"],
    "first_answer_cold": [rf"first answer (?:comes )?(?:after )?({_SECONDS})"],
    "cli_first_answer_cold": [rf"`ik_node solve`(?:'s)? (?:after )?({_SECONDS})"],
    "node_first_state_cold": [rf"rest posture on `[^`]*joint_states` ({_SECONDS}) after"],
    "node_ready_cold": [rf"({_SECONDS}) after a cold start"],
    "solve_many_arm7": [rf"`solve_many`:? ({_NUMBER} solves/s) on arm7"],
    "reach_map_arm7": [rf"1\.6 million poses\)?,? (?:in )?({_SECONDS})"],
    "demo_fresh_clone": [rf"the demo ({_SECONDS})", rf"scripts/demo\.sh` passes in ({_SECONDS})"],
    "tests_fresh_clone": [r"the tests (\d+ min \d+ s)", r"scripts/test\.sh` in (\d+ min \d+ s)"],
    "solve_all_compile_cold": [rf"({_SECONDS}) \(2 cores\) at the first `solve_all`"],
    "path_compile_cold": [rf"({_SECONDS}) \(2 cores\) at the first `cartesian_path`"],
}
#: What the README must quote: what a newcomer waits for.
README_FIGURES = {
    "cold_compile",
    "first_answer_cold",
    "cli_first_answer_cold",
    "node_first_state_cold",
    "node_ready_cold",
    "demo_fresh_clone",
    "tests_fresh_clone",
}


def headline_figures() -> dict[str, tuple[str, str]]:
    """docs/performance.md's headline table: figure -> (value as quoted, value measured)."""
    text = PERFORMANCE.read_text()
    assert HEADLINE_HEADING in text, "docs/performance.md has no '## Headline figures' section"
    section = text.split(HEADLINE_HEADING, 1)[1].split("\n## ", 1)[0]
    figures = {}
    for line in section.splitlines():
        match = re.match(r"^\| `([a-z0-9_]+)` \| ([^|]+) \| ([^|]+) \|", line)
        if match:
            name, value, measured = (group.strip() for group in match.groups())
            assert name not in figures, f"{name} is in the headline table twice"
            figures[name] = (value, measured)
    assert figures, "the headline table has no rows ('| `name` | value | measured | ...')"
    return figures


def quoting_texts() -> dict[str, str]:
    """Where figures are quoted: name -> text (performance.md without its headline table, the
    CHANGELOG's Unreleased section only)."""
    texts = {"README.md": README.read_text()}
    for path in sorted((PACKAGE_ROOT / "docs").glob("*.md")):
        text = path.read_text()
        if path == PERFORMANCE:
            before, _, after = text.partition(HEADLINE_HEADING)
            text = before + "\n## " + after.split("\n## ", 1)[1]
        texts[f"docs/{path.name}"] = text
    changelog = CHANGELOG.read_text()
    texts["CHANGELOG.md (Unreleased)"] = changelog.split("\n## Unreleased\n", 1)[1].split("\n## ", 1)[0]
    return texts


def quotes(text: str, name: str) -> list[str]:
    """The values of figure ``name`` quoted in ``text`` (whitespace, line breaks and "CPU " out)."""
    flat = re.sub(r"\s+", " ", text)
    found = []
    for pattern in QUOTES[name]:
        found += [match.group(1).replace("CPU ", "") for match in re.finditer(pattern, flat)]
    return [value if value.endswith("s") else f"{value} s" for value in found]


def disagreements(figures: dict[str, tuple[str, str]], texts: dict[str, str]) -> list[str]:
    return [
        f"{where}: {name} quoted as {value!r}, docs/performance.md's headline table says {figures[name][0]!r}"
        for where, text in texts.items()
        for name in QUOTES
        for value in quotes(text, name)
        if value != figures[name][0]
    ]


def test_every_quoted_figure_is_in_the_headline_table():
    assert set(QUOTES) <= set(headline_figures())


def test_each_headline_value_is_its_measurement_as_rounded():
    """``value`` is ``measured`` rounded to the digits ``value`` shows (half up), in the same unit."""
    problems = []
    for name, (value, measured) in headline_figures().items():
        number = re.fullmatch(rf"({_NUMBER}) (.+)", value)
        raw = re.fullmatch(rf"({_NUMBER}) (.+)", measured)
        if not (number and raw):
            if value != measured:
                problems.append(f"{name}: {value!r} is not {measured!r}")
            continue
        if number.group(2) != raw.group(2):
            problems.append(f"{name}: {value!r} and {measured!r} have different units")
            continue
        shown = Decimal(number.group(1).replace(",", ""))
        rounded = Decimal(raw.group(1).replace(",", "")).quantize(shown, rounding=ROUND_HALF_UP)
        if rounded != shown:
            problems.append(f"{name}: {measured!r} rounds to {rounded} {raw.group(2)}, not {value!r}")
    assert problems == []


def test_the_readme_and_the_docs_quote_the_headline_values():
    assert disagreements(headline_figures(), quoting_texts()) == []


def test_the_readme_quotes_every_start_up_figure():
    readme = README.read_text()
    assert {name for name in README_FIGURES if not quotes(readme, name)} == set()


def test_a_figure_quoted_differently_is_found():
    """The check itself: the README with its cold-compile figure changed fails it."""
    figures = headline_figures()
    value = figures["cold_compile"][0]
    readme = README.read_text()
    assert f"about {value} on 2 cores" in readme
    changed = {"README.md": readme.replace(f"about {value} on 2 cores", "about 99 s on 2 cores")}
    assert disagreements(figures, changed) == [
        f"README.md: cold_compile quoted as '99 s', docs/performance.md's headline table says {value!r}"
    ]


def test_the_programs_cold_compile_notice_says_the_headline_figure():
    jit = pytest.importorskip("ik_node.compiled.jit")
    assert jit.COLD_COMPILE == f"about {headline_figures()['cold_compile'][0]} on 2 cores"


def test_the_solve_all_compile_notice_says_the_headline_figure():
    all_solutions = pytest.importorskip("ik_node.solver.all_solutions")
    value = headline_figures()["solve_all_compile_cold"][0]
    assert f"once per install: about {value} on 2 cores" in all_solutions.COMPILE_NOTICE


def test_the_path_compile_notice_says_the_headline_figure():
    cartesian = pytest.importorskip("ik_node.solver.cartesian")
    value = headline_figures()["path_compile_cold"][0]
    assert f"once per install and set of features: about {value} on 2 cores" in cartesian.COMPILE_NOTICE
