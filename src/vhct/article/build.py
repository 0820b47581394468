"""Build the article: collect its record, draw its figures, render its Typst source and compile it
with Typst's compiler (the ``typst`` wheel: no TeX install, fonts embedded, offline).

The PDF is written atomically (a failed build leaves the previous one, or none); the Typst source
and images are built in a temporary folder. The PDF's date is the run's end, so the same inputs
give the same file.
"""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

from vhct.article.figures import draw_forest, draw_regret
from vhct.article.record import Article, collect
from vhct.article.sources import ArticleError, read_sources
from vhct.article.typeset import render
from vhct.pipeline.files import atomic_paths

#: the Typst source's name in the build folder
SOURCE = "article.typ"


def typst_source(article: Article, audit, folder: Path) -> str:
    """Draw the figures into ``folder`` and return the Typst source that embeds them."""
    forest = draw_forest(audit, folder)
    figures = {f.name: draw_regret(f, folder) for f in article.figures}
    relative = {name: (p.name if p is not None else None) for name, p in figures.items()}
    return render(article, Path(forest.name), relative)


def compile_pdf(source: str, folder: Path, timestamp: float) -> bytes:
    """The PDF of a Typst source compiled in ``folder`` (its images beside it), with the embedded
    fonts only (no system font changes the result)."""
    import typst  # the compiler: the article's own dependency (pyproject extra `article`)

    (folder / SOURCE).write_text(source, encoding="utf-8")
    try:
        return typst.compile(str(folder / SOURCE), root=str(folder), ignore_system_fonts=True,
                             timestamp=int(timestamp))  # fmt: skip
    except RuntimeError as exc:
        raise ArticleError(f"{SOURCE}: Typst refused the rendered source: {exc}") from exc


def build(inputs: Path | str, out: Path | str, source_kind: str, checkout: Path | str = ".",
          keep_source: Path | str | None = None) -> Article:  # fmt: skip
    """Build ``out`` (the PDF) from an input folder; ``keep_source``: also write the Typst source there."""
    sources = read_sources(inputs, checkout)
    article = collect(sources, source_kind)
    when = datetime.fromisoformat(article.meta.finished).timestamp()
    with tempfile.TemporaryDirectory(prefix="vhct-article-") as tmp:
        folder = Path(tmp)
        source = typst_source(article, sources.audit, folder)
        pdf = compile_pdf(source, folder, when)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_paths(out) as (tmp_out,):
        Path(tmp_out).write_bytes(pdf)
    if keep_source is not None:
        Path(keep_source).write_text(source, encoding="utf-8")
    return article
