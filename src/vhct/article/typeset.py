"""The article's Typst source, rendered from the templates (``templates/*.typ.j2``) and the record.

Every value a template prints is escaped for Typst's markup (``finalize``), so a quote of the paper
or a setting's name is text, never markup; a template marks its own markup with the ``raw`` filter.
The prose is in the templates: ``article.typ.j2`` (the structure and every sentence that states a
finding, rendered from the record's fields), ``history.typ.j2`` (the design history, from the record
:mod:`vhct.reporting.history` gives docs/findings.md's section too), ``remarks.typ.j2`` (the
project's own discussion and its easy and difficult parts, each resting on named claims: a remark
is printed only while each claim it names has the verdict it was written for, and names them).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, pass_context
from jinja2.runtime import Context
from markupsafe import Markup
from pydantic import BaseModel

from vhct.article.figures import PAGE, Page, Placed
from vhct.article.record import Article, Statement
from vhct.article.sources import ArticleError
from vhct.durations import duration
from vhct.reporting.history import SHORT_ID, Unavailable, clipped, duration_text, grouped, seed_ranges, when
from vhct.reporting.view import View, capitalize_first, computed_name, format_number

#: the characters Typst's markup gives a meaning (escaped with a backslash in printed values)
TYPST_SPECIAL = re.compile(r"([\\#*_`$<>@\[\]~/=+-])")
#: an apostrophe after a digit ("rho=0.75's")
AFTER_DIGIT = re.compile(r"(?<=[0-9])'")
#: what a printed value may not hold: a paragraph break (a blank line) or a control character
UNHOLDABLE = re.compile(r"\n[ \t]*\n|[\x00-\x08\x0b-\x1f\x7f]")


class Typst(Markup):
    """Text that is Typst markup already (printed as it is)."""


def escape(value: Any) -> str:
    """A value as Typst markup text: every special character escaped, and an apostrophe after a digit
    made a right single quote (Typst would set a prime: "rho=0.75′s")."""
    return AFTER_DIGIT.sub("\u2019", TYPST_SPECIAL.sub(r"\\\1", str(value)))


def _finalize(value: Any) -> Any:
    if isinstance(value, Typst):
        return value
    if isinstance(value, float):
        return escape(format_number(value))
    return escape("" if value is None else value)


def raw(value: Any) -> Typst:
    """Mark a template's own markup (a path, a Typst call) as printed unescaped."""
    return Typst(str(value))


def string(value: Any) -> Typst:
    """A value as a Typst string literal (for a function's argument, e.g. an image's path)."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return Typst('"' + text + '"')


def number(value: Any) -> str:
    """A number as the audit's tables print it (4 significant digits)."""
    return format_number(value)


def span(values: Iterable[int]) -> str:
    """``20`` or ``20 to 200``: the range of a set of counts."""
    ordered = sorted(set(values))
    return str(ordered[0]) if len(ordered) == 1 else f"{ordered[0]} to {ordered[-1]}"


def params(values: Mapping[str, Any]) -> str:
    """A setting's parameters on one line (``rho=0.75, nu=1``; nested values as written)."""
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "defaults"


@pass_context
def rests_on(ctx: Context, claims: Sequence[str], verdicts: Sequence[str] | str) -> bool:
    """Whether every claim named has one of ``verdicts`` (a verdict, or ``verdict: category``): a
    remark is printed only then."""
    article: Article = ctx["a"]
    allowed = [verdicts] if isinstance(verdicts, str) else list(verdicts)
    return all(article.verdict(c) in allowed or article.outcome(c) in allowed for c in claims)


def environment() -> Environment:
    """The templates' environment: strict (an unknown name fails), values escaped for Typst."""
    env = Environment(
        loader=PackageLoader("vhct.article", "templates"),
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        extensions=["jinja2.ext.do"],
    )
    env.filters.update(
        raw=raw,
        string=string,
        number=number,
        duration=duration,
        params=params,
        esc=escape,
        span=span,
        capitalize_first=capitalize_first,
        short=lambda sha: sha[:SHORT_ID],
        when=when,
        span_text=duration_text,
        ranges=seed_ranges,
        clip=clipped,
        computed_name=computed_name,
    )
    env.tests["unavailable"] = lambda x: isinstance(x, Unavailable)
    env.globals.update(rests_on=rests_on, isfinite=math.isfinite, grouped=grouped)
    return env


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a record with where it is (``statement <id>: quote``). The view is not walked:
    what it prints is made of the audit's strings that the statements, settings and experiments hold."""
    if isinstance(value, View):
        return
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _strings(getattr(value, name), f"{where}: {name}")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        label = f"statement {value.id}" if isinstance(value, Statement) else where
        for f in dataclasses.fields(value):
            yield from _strings(getattr(value, f.name), f"{label}: {f.name}" if label else f.name)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key, where)
            yield from _strings(item, f"{where}: {key}")
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, where)


def check_text(article: Article) -> None:
    """Refuse, before typesetting, a string of the record that Typst's markup cannot hold as text: a
    paragraph break (it would end the paragraph, list item or table cell the value is printed in) or
    a control character; the error names the statement (or part) and the field."""
    for where, text in _strings(article, ""):
        found = UNHOLDABLE.search(text)
        if found is not None:
            what = "a paragraph break" if "\n" in found.group() else "a control character"
            raise ArticleError(
                f"{where}: holds {what} ({found.group()!r}), which the article cannot print as text; edit it"
            )


def render(
    article: Article, forest: Sequence[Placed], figures: Mapping[str, Placed | None], page: Page = PAGE
) -> str:
    """The article's Typst source on ``page``; ``forest`` (its parts) and ``figures`` (name -> image,
    None: not drawn) are images in the folder it is compiled in (embedded by their names)."""
    template = environment().get_template("article.typ.j2")
    return template.render(a=article, forest=forest, figures=figures, page=page)
