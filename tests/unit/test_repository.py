"""What users of a research repository look for first: the licence, how to cite, the paper's link."""

from __future__ import annotations

import tomllib

import yaml
from support import REPO


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
