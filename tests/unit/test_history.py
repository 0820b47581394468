"""The design history (vhct.reporting.history) read from a made-up repository's record, and from
this repository's (structure only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from support import REPO

from vhct.article import typeset
from vhct.article.build import compile_pdf
from vhct.reporting import gitlog
from vhct.reporting.audit.seen import ShippedVersion
from vhct.reporting.history import (
    ATTEMPTS,
    Attempt,
    ClaimsChange,
    DesignHistory,
    ExperimentSeeds,
    FileChange,
    FinalRun,
    HistoryError,
    PilotExperiment,
    Plan,
    ShippedFindings,
    ShippedRun,
    Unavailable,
    design_history,
    experiment_seeds,
    history_of,
    main,
    render,
    seed_ranges,
)

#: the made-up repository's first commit time; each later commit one hour on
T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
#: how long after the plan's commit the made-up final run starts
RUN_DELAY = timedelta(seconds=90)


def claims(*entries: tuple[str, str], rules: str = "r1") -> dict:
    return {"version": 1, "rules": {"kind": rules}, "claims": [{"id": i, "note": n} for i, n in entries]}


def audit(seeds: dict[str, list[int]], settings: bool = False, fmt: int = 1) -> dict:
    """A made-up audit JSON: each experiment's seeds on the experiment, or on its settings."""
    experiments = {
        name: ({"settings": {"A": {"seeds": s}, "B": {"seeds": s[:1]}}} if settings else {"seeds": s})
        for name, s in seeds.items()
    }
    return {"format": fmt, "context": {"experiments": experiments}, "claims": []}


def provenance(commit: str, started: datetime, run_id: str) -> dict:
    return {
        "run_id": run_id,
        "commit": commit,
        "config_files": ["config/pilot.yaml", "config/run.yaml"],
        "started_utc": started.isoformat(),
        "finished_utc": (started + timedelta(minutes=30)).isoformat(),
    }


class MadeUp:
    """A git repository in a folder, committed to at made-up times."""

    def __init__(self, root: Path) -> None:
        self.root, self.clock = root, T0
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org",
            "GIT_AUTHOR_DATE": self.clock.isoformat(),
            "GIT_COMMITTER_DATE": self.clock.isoformat(),
        }
        done = subprocess.run(
            ["git", "-C", str(self.root), *args], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.strip()

    def write(self, name: str, content: dict | str) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = (
            content
            if isinstance(content, str)
            else json.dumps(content)
            if name.endswith(".json")
            else yaml.safe_dump(content)
        )
        path.write_text(text, encoding="utf-8")

    def commit(self, subject: str, files: dict[str, dict | str] | None = None) -> str:
        for name, content in (files or {}).items():
            self.write(name, content)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", subject)
        sha = self.git("rev-parse", "HEAD")
        self.clock += timedelta(hours=1)
        return sha


@pytest.fixture
def made_up(tmp_path: Path) -> tuple[MadeUp, dict[str, str]]:
    """A made-up repository: a pilot, two shipped findings of one run (the second re-rendered),
    claims changed between and after them, a plan, and the final findings on the plan."""
    return build(tmp_path / "repo")


def build(root: Path, rerun: bool = False) -> tuple[MadeUp, dict[str, str]]:
    """The made-up repository of :func:`made_up`; ``rerun``: the second findings from a run of their own."""
    repo, c = MadeUp(root), {}
    pilot = (REPO / "config" / "tiny.yaml").read_text(encoding="utf-8")
    run_config = {"plan": {"file": "plans/run.yaml", "pilot": "pilot.yaml"}}
    first = audit({"e1": list(range(10)), "e2": [0, 1, 2, 3, 4]})
    c["start"] = repo.commit(
        "pilot and claims",
        {
            "config/pilot.yaml": pilot,
            "config/run.yaml": run_config,
            "config/claims.yaml": claims(("a", "one"), ("b", "two")),
        },
    )
    c["shipped"] = repo.commit(
        "ship the first findings",
        {
            "docs/findings/audit.json": first,
            "docs/findings/provenance.json": provenance(c["start"], T0 + timedelta(minutes=10), "r1"),
        },
    )
    c["claims1"] = repo.commit(
        "claims: a reworded, c added, rules changed",
        {"config/claims.yaml": claims(("a", "one!"), ("b", "two"), ("c", "three"), rules="r2")},
    )
    again = audit({"e1": list(range(10)), "e2": [0, 1, 2, 3, 4]}, settings=True, fmt=2)
    second = {"docs/findings/audit.json": again}
    if rerun:
        second["docs/findings/provenance.json"] = provenance(c["claims1"], repo.clock, "r1b")
    c["rerendered"] = repo.commit("findings re-rendered in a new format", second)
    c["claims2"] = repo.commit(
        "claims: b removed", {"config/claims.yaml": claims(("a", "one!"), ("c", "three"), rules="r2")}
    )
    plan = {
        "format": 1,
        "claims_file": "../claims.yaml",
        "commit": c["claims2"],
        "pilot": {"config": "config/pilot.yaml", "seeds": {"garland": [0, 1], "counterexample": [3]}},
    }
    c["plan"] = repo.commit("the analysis plan", {"config/plans/run.yaml": plan})
    plan_time = repo.clock - timedelta(hours=1)
    c["final"] = repo.commit(
        "ship the findings on the plan",
        {
            "docs/findings/audit.json": audit({"e1": list(range(5, 15)), "e3": [20, 21]}, fmt=3),
            "docs/findings/provenance.json": provenance(c["plan"], plan_time + RUN_DELAY, "r2"),
        },
    )
    return repo, c


def test_the_record_of_a_made_up_repository(made_up):
    repo, c = made_up
    h = design_history(repo.root)
    # (a) the findings shipped before the plan, oldest first; the re-rendered version is the same run
    assert [v.version.commit for v in h.shipped] == [c["shipped"], c["rerendered"]]
    first, again = h.shipped
    assert (first.run_commit, first.config_files) == (c["start"], ("config/pilot.yaml", "config/run.yaml"))
    assert {e.experiment: e.seeds for e in first.experiments} == {
        "e1": tuple(range(10)),
        "e2": tuple(range(5)),
    }
    assert not first.same_run and again.same_run
    assert {e.experiment: e.seeds for e in again.experiments} == {
        "e1": tuple(range(10)),
        "e2": tuple(range(5)),
    }
    assert [v.version.commit for v in h.runs] == [c["shipped"]]
    # the final run's seeds an earlier shipped run had run
    assert [(s.experiment, s.seeds, s.versions) for s in h.seen] == [("e1", (5, 6, 7, 8, 9), (c["shipped"],))]
    # (b) the claims changes after the first shipped findings, before the plan
    assert h.claims_path == "config/claims.yaml"
    assert [x.commit for x in h.claims_changes] == [c["claims1"], c["claims2"]]
    one, two = h.claims_changes
    assert (one.added, one.removed, one.changed, one.sections) == (("c",), (), ("a",), ("rules",))
    assert (two.added, two.removed, two.changed, two.sections) == ((), ("b",), (), ())
    assert one.after == two.after == c["shipped"]
    assert one.subject == "claims: a reworded, c added, rules changed"
    assert h.claims_changes_after(c["shipped"]) == h.claims_changes
    # (c) the plan, the final run and the gap between them; the last change of each file the run read
    assert (h.plan.path, h.plan.commit, h.plan.written_at) == (
        "config/plans/run.yaml",
        c["plan"],
        c["claims2"],
    )
    assert (h.run.commit, h.run.findings_commit) == (c["plan"], c["final"])
    assert h.gap == RUN_DELAY
    last = {f.path: (f.commit, f.before_run) for f in h.last_changes}
    assert last["config/run.yaml"][0] == c["start"]
    assert last["config/plans/run.yaml"] == (c["plan"], RUN_DELAY)
    assert last["config/claims.yaml"] == (c["claims2"], RUN_DELAY + timedelta(hours=1))
    # (d) no attempts file: none; (e) the pilot as the pipeline loads it, beside the plan's record
    assert h.attempts == ()
    pilot = {p.experiment: p for p in h.pilot}
    assert pilot["counterexample"].seeds == (3, 7) and pilot["garland"].seeds == (0, 1)
    assert pilot["counterexample"].recorded == (3,) and pilot["mnist"].recorded is None
    assert [p.experiment for p in h.pilot_mismatches] == ["counterexample"]


def test_a_claims_change_is_placed_after_the_newest_run_it_is_not_part_of(tmp_path):
    repo, c = build(tmp_path / "repo", rerun=True)
    h = design_history(repo.root)
    assert [v.version.commit for v in h.runs] == [c["shipped"], c["rerendered"]]
    assert [x.after for x in h.claims_changes] == [c["shipped"], c["rerendered"]]
    assert [x.commit for x in h.claims_changes_after(c["rerendered"])] == [c["claims2"]]
    assert h.claims_changes_after(c["shipped"]) == h.claims_changes
    text = render(h)
    assert "findings were shipped 2 times, from 2 runs." in text
    assert "2 commits changed the claims file (`config/claims.yaml`); 1 of them came after" in text


def test_the_section_states_the_record(made_up):
    repo, c = made_up
    text = render(design_history(repo.root))
    assert text.startswith("## Design history\n")
    assert "findings were shipped 2 times, from 1 run (the other 1 re-rendered the run before)" in text
    assert f"| e1 | 5-14 | 5-9 | {c['shipped'][:7]} |" in text
    assert "2 commits changed the claims file (`config/claims.yaml`); 2 of them came after" in text
    assert "started 1 min 30 s later" in text
    assert "No attempt that was not shipped is recorded" in text
    assert "The plan recorded other pilot seeds for 1 experiment: counterexample 3." in text


def test_stopped_attempts_are_read_and_checked(made_up, capsys):
    repo, c = made_up
    attempt = {"date": "2030-01-01", "config": "config/run.yaml", "ran": "half", "stopped": "too slow"}
    repo.write(ATTEMPTS, {"attempts": [{**attempt, "plan_commit": c["plan"][:10]}]})
    h = design_history(repo.root)
    assert [(a.plan_commit, a.stopped) for a in h.attempts] == [(c["plan"][:10], "too slow")]
    assert "| half | too slow |" in render(h)
    repo.write(ATTEMPTS, {"attempts": [{**attempt, "plan_commit": c["start"][:10]}]})
    with pytest.raises(HistoryError, match=r"attempts\.0\.plan_commit: .* no commit that changed the plan"):
        design_history(repo.root)
    repo.write(ATTEMPTS, {"attempts": [{**attempt, "plan_commit": c["plan"], "why": "x"}]})
    with pytest.raises(HistoryError, match=r"attempts\.0\.why: Extra inputs"):
        design_history(repo.root)
    assert main(["--repo", str(repo.root)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_the_command_writes_the_section(made_up, tmp_path, capsys):
    repo, _ = made_up
    out = tmp_path / "history.md"
    assert main(["--repo", str(repo.root), "--markdown", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == capsys.readouterr().out == render(design_history(repo.root))


def test_a_repository_without_shipped_findings_is_refused_in_one_line(tmp_path):
    repo = MadeUp(tmp_path / "repo")
    repo.commit("nothing shipped", {"README.md": "x\n"})
    with pytest.raises(HistoryError, match="no commit ships findings"):
        design_history(repo.root)


def test_seed_ranges():
    assert seed_ranges([3, 0, 1, 2, 7, 9, 8]) == "0-3, 7-9"
    assert seed_ranges([5]) == "5" and seed_ranges([]) == "none"


def test_gitlog_reads_changes_and_blobs(made_up):
    repo, c = made_up
    found = gitlog.changes(repo.root, "config/claims.yaml")
    assert [x.commit for x in found] == [c["claims2"], c["claims1"], c["start"]]
    assert found[-1].before is None and found[0].before == found[1].after
    texts = gitlog.blobs(repo.root, [found[0].after, "nosuch" * 4])
    assert yaml.safe_load(texts[found[0].after])["claims"][-1]["id"] == "c"
    assert gitlog.show(repo.root, c["start"], "config/plans/run.yaml") is None
    assert gitlog.changes(repo.root, "config/claims.yaml", since=c["claims1"]) == found[:1]
    graph = gitlog.ancestry(repo.root)
    assert c["shipped"] in gitlog.ancestors(graph, c["plan"]) and c["plan"] not in gitlog.ancestors(
        graph, c["shipped"]
    )
    with pytest.raises(gitlog.GitError, match="git log failed"):
        gitlog.changes(repo.root, "x", rev="no-such-rev")


def _full_history() -> bool:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return False
    shallow = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    )
    return shallow.returncode == 0 and shallow.stdout.strip() == "false"


@pytest.mark.skipif(not _full_history(), reason="needs this repository's full git history")
def test_this_repository_has_a_design_history():
    h = design_history(REPO)
    assert h.shipped and h.runs, "no findings shipped before the plan"
    assert all(v.version.date <= h.plan.date for v in h.shipped)
    assert h.plan.commit in {c.commit for c in gitlog.changes(REPO, h.plan.path)}
    assert h.run.started >= h.plan.date and h.gap >= timedelta(0)
    assert h.pilot and all(p.seeds for p in h.pilot)
    assert all(c.after in {v.version.commit for v in h.runs} for c in h.claims_changes)
    assert "## Design history" in render(h)


# ---------------------------------------------------------------- the section in both documents


def made_up_record() -> DesignHistory:
    """A design history made up field by field: two shipped runs, a claims change, a plan, a run
    that reran seeds of the first, a stopped attempt, and a pilot the plan recorded otherwise."""
    t = T0
    first = ShippedFindings(
        version=ShippedVersion("a" * 40, t, "ship one", seeds={"garland": list(range(10))}),
        run_commit="1" * 40,
        config_files=("config/run.yaml",),
        run_started=t,
        same_run=False,
    )
    return DesignHistory(
        shipped=(first,),
        claims_changes=(
            ClaimsChange(
                commit="c" * 40,
                date=t + timedelta(hours=1),
                subject="claims: margin moved",
                added=("new-claim",),
                removed=(),
                changed=("old-claim",),
                sections=("rules",),
                after="a" * 40,
            ),
        ),
        claims_path="config/claims.yaml",
        plan=Plan(
            path="config/plans/run.yaml",
            commit="d" * 40,
            date=t + timedelta(hours=2),
            subject="the plan",
            written_at=None,
        ),
        run=FinalRun(
            commit="d" * 40,
            findings_commit=None,
            config_files=("config/run.yaml",),
            started=t + timedelta(hours=2, minutes=4),
            finished=None,
            experiments=(ExperimentSeeds(experiment="garland", seeds=tuple(range(5, 25))),),
        ),
        last_changes=(
            FileChange(
                path="config/plans/run.yaml",
                commit="d" * 40,
                date=t + timedelta(hours=2),
                subject="the plan",
                before_run=timedelta(minutes=4),
            ),
        ),
        attempts=(
            Attempt(
                date=t.date(), plan_commit="d" * 7, config="config/run.yaml", ran="half", stopped="too slow"
            ),
        ),
        pilot_config="config/pilot.yaml",
        pilot=(
            PilotExperiment(experiment="garland", seeds=(0, 1, 2, 3), fewer=(("BO", 2),), recorded=(0, 1)),
        ),
    )


def typst_history(record: DesignHistory | Unavailable | None) -> str:
    """The article's design history (body and appendix) rendered from ``record`` alone."""
    env = typeset.environment()
    article = SimpleNamespace(history=record)
    parts = [env.get_template("history.typ.j2").render(a=article, part=p) for p in ("body", "appendix")]
    return '#set heading(numbering: "1.1")\n' + "\n".join(parts)


def test_one_record_gives_the_section_of_both_documents(tmp_path):
    record = made_up_record()
    md = render(record)
    typ = typst_history(record)
    for text in (md, typ):
        # the sentences first: what was shipped, reran, changed; the plan and the run, 4 min apart
        assert "findings were shipped 1 time, from 1 run" in text
        assert "4 min 0 s" in text and "1 confirmatory attempt was started and not shipped" in text
        assert "aaaaaaa" in text and "ddddddd" in text
    # the long lists as tables: the seeds an earlier run had run, the claims change, the attempt
    assert "| garland | 5-24 | 5-9 | aaaaaaa |" in md
    assert (
        "| ccccccc | 2030-01-01 10:00:00 UTC | aaaaaaa | added new-claim; changed old-claim | rules |" in md
    )
    # (Typst's source escapes a printed hyphen)
    assert r"[garland], [5\-24], [5\-9], [aaaaaaa]," in typ
    assert r"[added new\-claim; changed old\-claim], [rules]" in typ
    assert "The plan recorded other pilot seeds for 1 experiment: garland 0-1." in md
    assert r"(garland 0\-1)" in typ
    assert typ.index("== Design history") < typ.index("= Appendix: design history")
    # the Typst source compiles (its references find their labels)
    pdf = compile_pdf(typ, tmp_path, T0.timestamp())
    assert pdf.startswith(b"%PDF")


def test_where_git_cannot_tell_the_history_each_document_says_so_in_one_sentence(tmp_path, made_up):
    repo, c = made_up
    run = shipped_run_of(repo)
    # no git repository at the folder the documents are rendered in
    plain = tmp_path / "plain"
    plain.mkdir()
    assert history_of(plain, run) == Unavailable(reason="no-git")
    # a folder inside a repository is not its top folder
    assert history_of(repo.root / "config", run) == Unavailable(reason="no-git")
    # a shallow clone
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(shallow)],
        check=True,
        capture_output=True,
    )
    assert history_of(shallow, run) == Unavailable(reason="shallow")
    # a run the repository lacks, one without a commit
    assert history_of(repo.root, run.model_copy(update={"commit": "e" * 40})).reason == "unknown-commit"
    assert history_of(repo.root, run.model_copy(update={"commit": None})).reason == "no-commit"
    for reason in ("no-git", "shallow"):
        md = render(Unavailable(reason=reason))
        heading, body = md.strip().split("\n\n")
        assert heading == "## Design history"
        assert body.startswith("The design history") and body.count(". ") == 0 and body.endswith(".")
        typ = typst_history(Unavailable(reason=reason))
        sentences = [line for line in typ.splitlines() if line.startswith("The design history")]
        assert len(sentences) == 1 and sentences[0].count(". ") == 0
        assert "Appendix" not in typ
    assert "shallow clone" in render(Unavailable(reason="shallow"))


def shipped_run_of(repo: MadeUp) -> ShippedRun:
    """The made-up repository's final run as its shipped files give it."""
    prov = json.loads((repo.root / "docs/findings/provenance.json").read_text())
    data = json.loads((repo.root / "docs/findings/audit.json").read_text())
    return ShippedRun(
        commit=prov["commit"],
        started=datetime.fromisoformat(prov["started_utc"]),
        finished=datetime.fromisoformat(prov["finished_utc"]),
        config_files=tuple(prov["config_files"]),
        experiments=experiment_seeds(json.dumps(data).encode()),
    )


def test_the_history_of_given_findings_does_not_move_with_later_commits(made_up):
    repo, c = made_up
    run = shipped_run_of(repo)
    before = history_of(repo.root, run)
    assert before == design_history(repo.root)
    assert before.run.findings_commit == c["final"]
    # later: the claims change again, the pilot config is edited (here: no config at all any more;
    # the history reads it as it was at the run's commit) and newer findings are shipped
    repo.commit("pilot config replaced", {"config/pilot.yaml": "not a config\n"})
    repo.commit("claims: d added", {"config/claims.yaml": claims(("a", "one!"), ("c", "3"), ("d", "4"))})
    later = repo.commit(
        "ship newer findings",
        {
            "docs/findings/audit.json": audit({"e1": list(range(30, 40))}, fmt=3),
            "docs/findings/provenance.json": provenance(c["plan"], repo.clock, "r3"),
        },
    )
    again = history_of(repo.root, run)
    # the same record, but for the commit that shipped these findings (now not the newest)
    assert (
        again.model_copy(update={"run": again.run.model_copy(update={"findings_commit": c["final"]})})
        == before
    )
    assert again.run.findings_commit is None
    assert render(again) == render(before)
    assert design_history(repo.root).run.findings_commit == later
