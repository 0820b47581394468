"""Build the article: collect its record, draw its figures, render its Typst source and compile it
with Typst's compiler (the ``typst`` wheel: no TeX install, fonts embedded, offline).

The PDF is written atomically (a failed build leaves the previous one, or none); the Typst source
and images are built in a temporary folder. The PDF's date is the run's end, so the same inputs
give the same file. Every input is read and checked, and the output path too, before anything is
drawn; each step is reported as it starts (``progress``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from vhct.article.figures import draw_forest, draw_regret
from vhct.article.record import Article, collect
from vhct.article.sources import SOURCE_KINDS, ArticleError, read_sources
from vhct.article.typeset import check_text, render
from vhct.pipeline.files import atomic_paths
from vhct.reporting.view import count_mismatches

#: the Typst source's name in the build folder
SOURCE = "article.typ"


def report(message: str) -> None:
    """A step of a long build, as it starts (stdout; stderr holds only a refusal's one line)."""
    print(message, flush=True)


def check_out(out: Path) -> None:
    """Refuse an output path that cannot take the file, before anything is built."""
    if out.is_dir():
        raise ArticleError(f"{out}: a folder; --out names the file to write (e.g. {out / 'article.pdf'})")
    parent = next((p for p in out.absolute().parents if p.exists()), None)
    if parent is not None and (not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK)):
        raise ArticleError(f"{out}: cannot write there ({parent} is not a writable folder)")


def typst_source(article: Article, audit, folder: Path, progress: Callable[[str], None] = report) -> str:
    """Draw the figures into ``folder`` and return the Typst source that embeds them."""
    drawn = [f for f in article.figures if f.present]
    progress(f"drawing the audit's forest (figure 1 of {len(drawn) + 1})")
    forest = draw_forest(audit, folder)
    figures = {}
    for f in article.figures:
        if f.present:
            progress(f"drawing {f.name} (figure {len(figures) + 2} of {len(drawn) + 1})")
        figures[f.name] = draw_regret(f, folder)
    source = render(article, forest, figures)
    check_counts(source, article)
    return source


def check_counts(source: str, article: Article) -> None:
    """Refuse a source whose sections state other numbers of statements or readings than the view's
    one count (:func:`vhct.reporting.view.count_mismatches`), naming them."""
    found = count_mismatches(source, article.view)
    if found:
        raise ArticleError(f"{SOURCE}: the sections disagree on the counts: {'; '.join(found)}")


def compile_pdf(source: str, folder: Path, timestamp: float) -> bytes:
    """The PDF of a Typst source compiled in ``folder`` (its images beside it), with the embedded
    fonts only (no system font changes the result)."""
    import typst  # the compiler: the article's own dependency (pyproject extra `article`)

    (folder / SOURCE).write_text(source, encoding="utf-8")
    try:
        return typst.compile(
            str(folder / SOURCE), root=str(folder), ignore_system_fonts=True, timestamp=int(timestamp)
        )
    except RuntimeError as exc:
        raise ArticleError(f"{SOURCE}: Typst refused the rendered source: {exc}") from exc


def build(
    inputs: Path | str,
    out: Path | str,
    kind: str,
    checkout: Path | str = ".",
    keep_source: Path | str | None = None,
    progress: Callable[[str], None] = report,
) -> Article:
    """Build ``out`` (the PDF) from an input folder (``kind``: "findings" or "results");
    ``keep_source``: also write the Typst source there (also when Typst refuses it, to show where)."""
    out = Path(out)
    check_out(out)
    progress(f"reading and checking {inputs}")
    sources = read_sources(inputs, checkout, kind)
    article = collect(sources, SOURCE_KINDS[kind])
    check_text(article)
    when = datetime.fromisoformat(article.meta.finished).timestamp()
    with tempfile.TemporaryDirectory(prefix="vhct-article-") as tmp:
        folder = Path(tmp)
        source = typst_source(article, sources.audit, folder, progress)
        if keep_source is not None:
            Path(keep_source).write_text(source, encoding="utf-8")
        progress("typesetting")
        pdf = compile_pdf(source, folder, when)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_paths(out) as (tmp_out,):
        Path(tmp_out).write_bytes(pdf)
    return article
