"""The article's figures, drawn into its build folder by the reporting layer's own drawers: the
audit's forest (``vhct.reporting.plots.forest``), in parts that each fit a page, and each regret
figure whose per-round curves are in the input (``vhct.reporting.plots.figure_job``); a figure whose
curves are absent is not drawn (the article says so).

The page (:data:`PAGE`) is the one place its size and margins are set: the template prints them and
every image is sized to its text area here (:func:`placed`), so none is taller than a page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from vhct.article.record import RegretFigure
from vhct.article.sources import ArticleError
from vhct.reporting.audit.records import Audit
from vhct.reporting.plots import figure_job
from vhct.reporting.plots.common import PNG_DPI
from vhct.reporting.plots.forest import forest_parts

#: the image format the article embeds (Typst reads PNG, SVG and PDF; PNG keeps the PDF small)
IMAGE = ".png"
#: panels across a regret figure in the article: two keep a panel readable at the page's width
MAX_COLUMNS = 2
CM_PER_INCH = 2.54
#: a share of the text width taken as all of it (an image's whole pixels round its drawn width down)
WHOLE = 0.99


@dataclass(frozen=True)
class Page:
    """The article's page: its paper (Typst's name), size and margins in cm, and the height a
    figure's caption takes below its image."""

    paper: str
    width_cm: float
    height_cm: float
    margin_x_cm: float
    margin_y_cm: float
    caption_cm: float
    #: the height of a section's and a subsection's headings above the forest's first part
    headings_cm: float

    @property
    def text_width(self) -> float:
        """The text area's width, inches."""
        return (self.width_cm - 2 * self.margin_x_cm) / CM_PER_INCH

    @property
    def text_height(self) -> float:
        """The text area's height, inches."""
        return (self.height_cm - 2 * self.margin_y_cm) / CM_PER_INCH

    @property
    def image_height(self) -> float:
        """The tallest image a figure may hold with its caption on one page, inches."""
        return self.text_height - self.caption_cm / CM_PER_INCH


#: A4; a caption of up to five lines of 10 pt with its gap above
PAGE = Page(
    paper="a4",
    width_cm=21.0,
    height_cm=29.7,
    margin_x_cm=1.8,
    margin_y_cm=2.0,
    caption_cm=3.0,
    headings_cm=2.5,
)


@dataclass(frozen=True)
class Placed:
    """An image of the build folder and the share of the text width it is set at (<= 1): its height
    at that width fits :attr:`Page.image_height`."""

    path: Path
    width: float

    @property
    def percent(self) -> str:
        """The width as Typst writes it (``87.5%``)."""
        return f"{100 * self.width:.1f}%"


def placed(path: Path, page: Page = PAGE) -> Placed:
    """An image set at its drawn size (its fonts as drawn), narrower where it is wider than the text
    or where its height would not fit the page with its caption."""
    with Image.open(path) as image:
        width, height = image.size
    drawn = width / PNG_DPI / page.text_width  # its drawn width as a share of the text width
    tall = page.text_width * height / width  # its height at the text width, inches
    return Placed(path, min(1.0, drawn, page.image_height / tall))


def draw_forest(audit: Audit, folder: Path, page: Page = PAGE) -> list[Placed]:
    """The forest figure of the audit in ``folder``, in parts each as wide as the text and at most as
    tall as a page's image (at full size: its fonts as drawn); the images the article embeds."""
    first = page.image_height - page.headings_cm / CM_PER_INCH  # below the section's two headings
    parts = forest_parts(audit, folder / "audit_forest", page.text_width, page.image_height, first)
    out = [placed(p, page) for p in parts]
    if any(p.width < WHOLE for p in out):  # each part is drawn to fit: a smaller one has smaller fonts
        raise ArticleError(f"{folder / 'audit_forest'}: a part of the forest is taller than a page")
    return out


def draw_regret(figure: RegretFigure, folder: Path, page: Page = PAGE) -> Placed | None:
    """A regret figure from its curve aggregates in ``folder`` (None when the input lacks them): at
    most MAX_COLUMNS panels across, its legend naming the settings (the caption gives their seeds)."""
    if not figure.present:
        return None
    stem = folder / figure.name
    curves = {e: {s: str(p) for s, p in by.items()} for e, by in figure.curves.items()}
    columns = min(figure.spec.columns or len(figure.spec.panels), MAX_COLUMNS)
    spec = figure.spec.model_copy(update={"columns": columns})
    figure_job(spec, curves, stem.with_suffix(".pdf"), stem.with_suffix(".png"), seeds_in_legend=False)
    return placed(stem.with_suffix(IMAGE), page)
