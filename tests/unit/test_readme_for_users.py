"""The README stays a user's page (short, pointing to the reference pages in docs/), and every link
between the README and those pages leads somewhere: a moved section keeps no dead link behind."""

from __future__ import annotations

import re
from pathlib import Path

from paths import REPO

ROOT = REPO
README = ROOT / "README.md"
#: The reference pages the README points to for what it no longer holds.
PAGES = ("report.md", "export.md", "recordings.md", "sources.md", "development.md", "performance.md",
         "validation.md")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines()
            if line.startswith("#") and " " in line and set(line.split(" ", 1)[0]) == {"#"}}


def test_the_readme_is_at_most_600_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 600


def test_the_readme_links_each_reference_page():
    text = README.read_text(encoding="utf-8")
    for name in PAGES:
        assert f"](docs/{name}" in text, name
        assert (ROOT / "docs" / name).is_file(), name


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file_and_heading():
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    dead = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a web address, not ours to check offline
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            if not where.exists() or (anchor and where.suffix == ".md" and anchor not in anchors(where)):
                dead.append(f"{page.relative_to(ROOT)}: {target}")
    assert not dead, dead


def test_the_slug_is_githubs():
    assert slug(" `jroof-tui export`, `plot` and `serve`") == "jroof-tui-export-plot-and-serve"
    schema = "the-export-schema-tables-columns-and-types"
    assert slug("The export schema: tables, columns and types") == schema
