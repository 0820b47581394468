"""What users of a research repository look for first: the licence, how to cite, the paper's link, a short
README, and links that lead somewhere."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support import REPO

from vhct.reporting.render import slug

#: the project's own Markdown pages: the README, the configs' and the data's, and docs/
MARKDOWN = ["README.md", "config/README.md", "data/README.md"] + sorted(
    str(page.relative_to(REPO)) for page in (REPO / "docs").rglob("*.md")
)


def test_the_licence_file_is_the_one_pyproject_declares():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    licence = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert declared == {"text": "MIT"} and licence.startswith("MIT License")


def test_citation_file_cites_this_project_and_the_paper():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["version"] == version
    paper = cff["preferred-citation"]
    title = "Optimum-statistical Collaboration Towards General and Efficient Black-box Optimization"
    assert paper["title"] == title
    assert [a["family-names"] for a in paper["authors"]] == ["Li", "Wang", "Cheng", "Song"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert paper["url"] in readme and "CITATION.cff" in readme and "(LICENSE)" in readme


def bibtex_entries(text: str) -> dict[str, tuple[str, dict[str, str]]]:
    """A BibTeX file's entries: key -> (entry type, fields), each field's value without its outer braces."""
    entries = {}
    for head in re.finditer(r"^@(\w+)\{([^,\s]+),", text, re.M):
        fields, at = {}, head.end()
        while (field := re.compile(r"\s*(\w+)\s*=\s*\{").match(text, at)) is not None:
            depth, end = 1, field.end()
            while depth:  # to the brace that closes the value
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
            fields[field[1].lower()] = text[field.end() : end - 1]
            at = re.compile(r"\s*,?\s*").match(text, end).end()
        assert text[at] == "}", f"CITATION.bib: entry {head[2]} has a field that is not `name = {{value}}`"
        entries[head[2]] = (head[1].lower(), fields)
    return entries


def bibtex_authors(cff_authors: list[dict[str, str]]) -> str:
    """CITATION.cff's authors as BibTeX writes them: `Family, Given` and `{an entity's name}`."""
    names = [
        f"{a['family-names']}, {a['given-names']}" if "family-names" in a else f"{{{a['name']}}}"
        for a in cff_authors
    ]
    return " and ".join(names)


def test_the_bibtex_file_says_what_citation_cff_says():
    """CITATION.bib (for LaTeX users) holds this project and the paper with CITATION.cff's facts, so that
    the two cannot drift apart; the README names both."""
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    entries = bibtex_entries((REPO / "CITATION.bib").read_text(encoding="utf-8"))
    assert [kind for kind, _ in entries.values()] == ["software", "article"]
    (_, project), (_, paper) = entries.values()
    assert project["title"] == cff["title"] and project["version"] == str(cff["version"])
    assert project["author"] == bibtex_authors(cff["authors"]) and project["license"] == cff["license"]
    released = cff.get("date-released")
    assert project.get("year") == (None if released is None else str(released)[:4])
    cited = cff["preferred-citation"]
    assert paper["title"] == cited["title"] and paper["author"] == bibtex_authors(cited["authors"])
    assert (paper["journal"], paper["year"], paper["url"]) == (
        cited["journal"],
        str(cited["year"]),
        cited["url"],
    )
    assert [f"arXiv:{paper['eprint']}"] == [i["value"] for i in cited["identifiers"]]
    assert paper.get("doi") == cited.get("doi")  # none today: one file gaining a DOI needs the other too
    assert "CITATION.bib" in (REPO / "README.md").read_text(encoding="utf-8")


#: the README's length: what it states at more length lives in docs/*.md, which it links
README_MAX_LINES = 250


def test_the_readme_stays_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md: {len(lines)} lines; move detail into docs/*.md"


def headings(page: Path) -> Iterator[str]:
    """The anchors of a Markdown page's headings, as GitHub makes them (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if not fenced and (heading := re.match(r"#{1,6} (.*)", line)):
            anchor = slug(heading[1])
            seen[anchor] = seen.get(anchor, -1) + 1
            yield anchor if seen[anchor] == 0 else f"{anchor}-{seen[anchor]}"


@pytest.mark.parametrize("page", MARKDOWN, ids=str)
def test_every_relative_link_of_a_page_finds_its_file_and_heading(page):
    text = (REPO / page).read_text(encoding="utf-8")
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        target, _, anchor = link.partition("#")
        path = (REPO / page).parent / target if target else REPO / page
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in set(headings(path))):
            broken.append(link)
    assert not broken, f"{page}: broken links {broken}"


#: a name a rule file defines at its top level: ``NAME = ...``, ``A, B = ...``, ``def name(``
_DEFINED = re.compile(r"^(?:def ([A-Za-z_]\w*)\(|([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*) =)", re.M)


def rule_file_names(path: Path) -> set[str]:
    """The names a rule file defines at its top level."""
    found = set()
    for function, assigned in _DEFINED.findall(path.read_text(encoding="utf-8")):
        found.update([function] if function else assigned.split(", "))
    return found


def test_a_rule_file_reads_no_name_another_rule_file_defines():
    """Issue 49: the rule files share common.smk's names only; a family's names (the audit's
    ``AUDIT_EXPERIMENTS``, ``CLAIMS``, ``AUDIT_BATCHES``) are read in its own file."""
    rules = REPO / "workflow" / "rules"
    files = sorted(rules.glob("*.smk"))
    assert rule_file_names(rules / "audit.smk") >= {"AUDIT_EXPERIMENTS", "CLAIMS", "AUDIT_BATCHES"}
    for owner in files:
        if owner.name == "common.smk":
            continue
        for name in rule_file_names(owner):
            readers = [
                f.name
                for f in files
                if f != owner and re.search(rf"\b{name}\b", f.read_text(encoding="utf-8"))
            ]
            assert not readers, f"{name} of {owner.name} is read by {readers}"


def test_the_formatter_is_the_house_rule_with_no_exemption():
    """Issue 49: ``ruff format`` over the code with no exemption comment, fmt skip or fmt off (CI
    runs ``ruff format --check`` on the same folders)."""
    folders = ("src", "tests", "benchmarks", "scripts", "workflow/scripts")
    exempt = re.compile("#" + r" fmt: (skip|off)")  # spelt so that this file does not match itself
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for folder in folders
        for path in sorted((REPO / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if exempt.search(line)
    ]
    assert not found, found
