"""The article's layout for its readers (issue 50 item 5): every image fits the page's text area
(none taller than a page, so none is clipped), the forest comes in parts that each fit at full size,
and every count of statements the article prints is the same count. The article is built from a
made-up run's findings (conftest's ``curved_root``) whose audit is given many statements."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support import reseal

from vhct.article.build import build, compile_pdf
from vhct.article.figures import PAGE, draw_forest, placed
from vhct.article.sources import read_sources
from vhct.reporting.plots.common import PNG_DPI, plt
from vhct.reporting.plots.forest import CONTINUED, forest_height, forest_rows, split_rows

pytestmark = pytest.mark.skipif(shutil.which("pdfimages") is None, reason="needs poppler's pdfimages")
#: rounding of an image's resolution in pdfimages' listing (whole ppi)
SLACK = 1.01


def oversized(pdf: Path) -> list[str]:
    """Each image of ``pdf`` taller or wider than the text area, as its page and size in inches
    (``pdfimages -list``: pixels and the resolution it is set at)."""
    listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True)
    found = []
    for line in listing.stdout.splitlines()[2:]:
        cols = line.split()
        if cols[2] != "image":
            continue
        page, (w, h), (x_ppi, y_ppi) = cols[0], map(int, cols[3:5]), map(int, cols[12:14])
        width, height = w / x_ppi, h / y_ppi
        if height > PAGE.text_height * SLACK or width > PAGE.text_width * SLACK:
            found.append(f"page {page}: {width:.2f} x {height:.2f} in")
    return found


#: statements added to the made-up audit, each a copy of one with a comparison: more forest rows
#: than one page holds
MORE_STATEMENTS = 40
#: comparisons of the first statement added: more rows than a short part holds
LONG_STATEMENT = 20


@pytest.fixture(scope="module")
def long_audit(curved_root, tmp_path_factory) -> Path:
    """A copy of the made-up checkout whose audit holds :data:`MORE_STATEMENTS` more statements, each
    a copy (under its own id) of one that reads a comparison, the first with its comparison repeated
    :data:`LONG_STATEMENT` times, recorded as the run's."""
    root = Path(shutil.copytree(curved_root, tmp_path_factory.mktemp("long") / "checkout"))
    path = root / "docs" / "findings" / "audit.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    compared = next(c for c in data["claims"] if any(e["comparisons"] for e in c["experiments"]))
    for k in range(MORE_STATEMENTS):
        more = copy.deepcopy(compared)
        more["claim"].update(id=f"more-{k}", reading_of=None)
        data["claims"].append(more)
    (experiment, *_) = (e for e in data["claims"][-MORE_STATEMENTS]["experiments"] if e["comparisons"])
    experiment["comparisons"] *= LONG_STATEMENT
    path.write_text(json.dumps(data), encoding="utf-8")
    reseal(root / "docs" / "findings")
    return root


@pytest.fixture(scope="module")
def article(long_audit, tmp_path_factory):
    """The article built from :func:`long_audit`: its record, PDF and Typst source."""
    folder = tmp_path_factory.mktemp("layout")
    built = build(
        long_audit / "docs" / "findings",
        folder / "a.pdf",
        "findings",
        long_audit,
        folder / "a.typ",
        progress=lambda _: None,
    )
    return built, folder / "a.pdf", (folder / "a.typ").read_text(encoding="utf-8")


def test_every_image_fits_the_text_area(article):
    _, pdf, source = article
    assert oversized(pdf) == []
    assert source.count("caption: [Every comparison of the audit, continued") >= 1  # the forest is split


def test_an_oversized_figure_is_found(tmp_path):
    """The check itself: an image set taller than a page is reported."""
    fig = plt.figure(figsize=(PAGE.text_width, 1.5 * PAGE.text_height))  # a page and a half
    fig.savefig(tmp_path / "tall.png", dpi=PNG_DPI)
    plt.close(fig)
    source = f'#set page(paper: "a4", margin: (x: {PAGE.margin_x_cm}cm, y: {PAGE.margin_y_cm}cm))\n'
    source += '#figure(image("tall.png", width: 100%), caption: [too tall])\n'
    (tmp_path / "a.pdf").write_bytes(compile_pdf(source, tmp_path, 0))
    (found,) = oversized(tmp_path / "a.pdf")
    assert found.startswith("page 1:")
    # placed at the width the article gives it, it fits with its caption
    width = placed(tmp_path / "tall.png").width
    assert width < 1 and width * 1.5 * PAGE.text_height <= PAGE.image_height * SLACK


def test_the_forest_parts_each_fit_a_page(long_audit, tmp_path):
    audit = read_sources(long_audit / "docs" / "findings", long_audit).audit
    rows = forest_rows(audit)
    parts = split_rows(rows, PAGE.image_height)
    assert len(parts) > 1 and sum(map(len, parts)) == len(rows)
    assert all(forest_height(p) <= PAGE.image_height for p in parts)
    # a claim longer than a part is cut, the later piece's panel marked continued
    short = split_rows(rows, 3.0)
    assert any(r.claim.endswith(f"({CONTINUED})") for p in short for r in p)
    assert all(forest_height(p) <= 3.0 for p in short)
    with pytest.raises(ValueError, match="holds no row"):
        split_rows(rows, 0.5)
    drawn = draw_forest(audit, tmp_path)
    assert len(drawn) >= len(parts) and all(p.width == pytest.approx(1.0, abs=0.01) for p in drawn)


def test_every_count_of_statements_is_the_same(article):
    built, _, source = article
    totals = re.findall(r"(?:Of|of) the (\d+) statements", source)
    totals += re.findall(r"(\d+) statements of the paper", source)
    assert totals and set(totals) == {str(built.n_statements)}, totals
    failed = len(built.by_verdict["not reproduced"])
    assert f"{failed} not reproduced" in source.split("= Introduction")[0]
    (said,) = re.findall(r"In all, (\d+) of the \d+ statements are not reproduced", source)
    assert int(said) == failed
