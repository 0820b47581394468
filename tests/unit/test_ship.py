"""Shipping a run's findings (vhct.reporting.ship) and the run provenance recorder it checks against."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from findings_run import complete, made_up_run
from support import REPO

from vhct.pipeline import provenance
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.pipeline.layout import AUDIT_JSON, PROVENANCE_JSON, SETTING_TABLES, VERDICTS_CSV, ResultsFolder
from vhct.pipeline.stale import AuditJob, read_spec
from vhct.pipeline.store import RECORDS, read_batch
from vhct.pipeline.versions import package_versions
from vhct.reporting import findings, ship
from vhct.reporting.audit.records import AUDIT_FORMAT, parse_audit, read_audit
from vhct.reporting.findings import FindingsError
from vhct.reporting.render import headline, seeds_span

README_TEXT = f"# title\n\n{findings.README_BEGIN}\nold\n{findings.README_END}\n\nrest\n"


def snapshot(*folders: Path) -> dict[str, bytes]:
    """Every file below ``folders`` (paths relative to their parent) with its bytes."""
    return {
        str(path.relative_to(folder.parent)): path.read_bytes()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def rerecord(results: Path, figures: Path) -> None:
    """Record the outputs' checksums again, as a run that had left them so would have."""
    path = results / PROVENANCE_JSON
    prov = json.loads(path.read_text())
    prov["output_sha256"] = provenance.output_hashes(results, figures, prov["figures"])
    path.write_text(json.dumps(prov))


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.fixture
def shipped(tmp_path):
    """A run shipped once into docs/ (with a README), then a second made-up run to ship over it."""
    first, first_figures = made_up_run(tmp_path / "first")
    docs, readme = tmp_path / "docs", tmp_path / "README.md"
    readme.write_text(README_TEXT)
    ship.ship(first, first_figures, docs, readme)
    results, figures = made_up_run(tmp_path / "second")
    return results, figures, docs, readme


def refused(results: Path, figures: Path, docs: Path, readme: Path, match: str, **kwargs) -> None:
    """Ship must refuse with ``match`` in its message and leave docs/ and the README byte-unchanged."""
    before = snapshot(docs), readme.read_bytes()
    with pytest.raises(FindingsError, match=match):
        ship.ship(results, figures, docs, readme, **kwargs)
    assert (snapshot(docs), readme.read_bytes()) == before


# ---------------------------------------------------------------- what is shipped
def test_ship_names_a_missing_input_and_changes_nothing(tmp_path):
    results, figures = made_up_run(tmp_path)
    (results / PROVENANCE_JSON).unlink()
    docs = tmp_path / "docs"
    (docs / findings.DATA_DIR).mkdir(parents=True)
    (docs / findings.DATA_DIR / "keep.txt").write_text("old")
    with pytest.raises(FindingsError, match="provenance.json"):
        ship.ship(results, figures, docs)
    assert (docs / findings.DATA_DIR / "keep.txt").read_text() == "old"


def test_ship_copies_only_the_figures_the_findings_link(shipped):
    results, figures, docs, readme = shipped
    (docs / findings.FIGURES_DIR / "stale.png").write_bytes(b"old")  # from an earlier shipping
    shipped_files = ship.ship(results, figures, docs, readme)
    assert sorted(p.name for p in (docs / findings.FIGURES_DIR).iterdir()) == [
        "audit_forest.png",
        "audit_summary.png",
        "fig3a_garland.png",
        "fig3c_mnist.png",
    ]
    text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
    names = ("audit_forest", "audit_summary", "fig3a_garland", "fig3c_mnist")
    linked = {f"figures/{name}.png" for name in names}
    assert set(ship.FIGURE_LINK.findall(text)) == linked
    assert "tiny_regret" not in text  # in figures/, but not a figure of the recorded run's config
    assert all(p.is_file() for p in shipped_files) and docs / findings.DOCUMENT in shipped_files
    for source in (results / AUDIT_JSON, figures / "fig3a_garland.png"):
        target = (
            docs / (findings.DATA_DIR if source.suffix == ".json" else findings.FIGURES_DIR) / source.name
        )
        assert target.read_bytes() == source.read_bytes()
    assert headline(read_audit(results / AUDIT_JSON)) in readme.read_text()
    assert readme.read_text().endswith("\n\nrest\n") and "\nold\n" not in readme.read_text()
    assert not list(docs.glob(".findings-*"))  # no stage, no journal left


def test_ship_caches_each_settings_curve_and_timing_as_the_run_wrote_them(shipped):
    """The results cache (issue 38): every audited setting's per-round curve and timing aggregates are
    shipped byte for byte (so their sha256 is the one the provenance record fixed)."""
    results, figures, docs, readme = shipped
    ship.ship(results, figures, docs, readme)
    audit = read_audit(results / AUDIT_JSON)
    expected = [
        ResultsFolder("").setting_table(e, s, t)
        for e, exp in audit.context.experiments.items()
        for s in exp.settings
        for t in SETTING_TABLES
    ]
    assert len(expected) == 8
    for rel in expected:
        assert (docs / findings.DATA_DIR / rel).read_bytes() == (results / rel).read_bytes()


def test_ship_refuses_a_run_without_a_settings_curve_naming_it(shipped):
    results, figures, docs, readme = shipped
    curve = results / ResultsFolder("").setting_table("garland", "BO", "regret.csv")
    curve.unlink()
    refused(results, figures, docs, readme, f"missing input.*{re.escape(str(curve))}")


def test_readme_block_is_replaced_between_the_markers_and_missing_markers_fail(tmp_path):
    results, figures = made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs)
    readme = tmp_path / "README.md"
    readme.write_text(README_TEXT.replace("\nold\n", "\nold headline\n"))
    ship.rewrite(docs, readme)
    text = readme.read_text()
    assert "old headline" not in text and text.startswith("# title\n") and text.endswith("\n\nrest\n")
    assert ship.readme_block(docs) in text
    assert (docs / findings.DOCUMENT).read_text() == findings.render(docs)
    readme.write_text("# no markers\n")
    with pytest.raises(FindingsError, match="markers"):
        ship.rewrite(docs, readme)


# ---------------------------------------------------------------- one run: ids, contents, versions
def test_ship_refuses_an_audit_of_other_config_files(shipped):
    """make paper-local, then make figures (default config), then make findings: refused."""
    results, figures, docs, readme = shipped
    edit_json(results / AUDIT_JSON, lambda a: a["context"].update(configfiles=["config/config.yaml"]))
    refused(
        results,
        figures,
        docs,
        readme,
        r"made with the config file\(s\) config/config.yaml, the recorded run with",
    )


def test_ship_refuses_aggregates_of_another_config(shipped):
    results, figures, docs, readme = shipped
    final = results / "aggregates" / "garland" / "final.csv"
    table = pd.read_csv(final)
    table["n_seeds"] = 4  # the default config's seeds
    table.to_csv(final, index=False)
    rerecord(results, figures)  # even when the recorder saw them so
    refused(results, figures, docs, readme, r"final.csv .* with seeds \{'VHCT-rho0.75': 4")


def test_ship_refuses_an_audit_without_the_recorded_run_id_or_config_checksum(shipped):
    results, figures, docs, readme = shipped
    audit_path = results / AUDIT_JSON
    prov = json.loads((results / PROVENANCE_JSON).read_text())
    for run_id in (
        prov["run_id"] + "-other",
        None,
    ):  # another run's audit; an audit made without the recorder
        edit_json(audit_path, lambda a, r=run_id: a["context"].update(run_id=r))
        rerecord(results, figures)
        refused(results, figures, docs, readme, "records run_id .* they come from different runs")
    edit_json(audit_path, lambda a: a["context"].update(run_id=prov["run_id"]))
    edit_json(
        audit_path, lambda a: a["context"].update(config_sha256={k: "0" * 64 for k in prov["config_sha256"]})
    )
    rerecord(results, figures)
    refused(results, figures, docs, readme, "records config_sha256")
    edit_json(audit_path, lambda a: a["context"].update(config_sha256=prov["config_sha256"]))
    rerecord(results, figures)
    ship.ship(results, figures, docs, readme)  # the same ids: shipped


def test_ship_refuses_an_older_provenance_record_and_a_readme_without_markers(shipped):
    results, figures, docs, readme = shipped
    prov_path = results / PROVENANCE_JSON
    saved = prov_path.read_text()
    edit_json(prov_path, lambda p: [p.pop(k) for k in ("run_id", "finished_utc")])
    refused(results, figures, docs, readme, "run_id: Field required; finished_utc: Field required")
    prov_path.write_text(saved)
    edit_json(prov_path, lambda p: [p.pop(k) for k in ("versions", "output_sha256")])  # before this change
    refused(results, figures, docs, readme, "versions: Field required; output_sha256: Field required")
    prov_path.write_text(saved)
    readme.write_text("# no markers any more\n")
    refused(results, figures, docs, readme, "markers")


def test_content_not_modification_time_ties_each_file_to_the_run(shipped):
    """An audit edited with its time put back (touch -r) is refused; so is any changed output."""
    results, figures, docs, readme = shipped
    audit_path = results / AUDIT_JSON
    stat = audit_path.stat()
    original = audit_path.read_bytes()
    edit_json(audit_path, lambda a: a["claims"][1].update(verdict="reproduced"))
    os.utime(audit_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # touch -r
    assert audit_path.stat().st_mtime_ns == stat.st_mtime_ns
    refused(results, figures, docs, readme, r"audit.json: sha256 \w+\.\.\., the recorded run left")
    audit_path.write_bytes(original)
    timing = results / "aggregates" / "mnist" / "timing.csv"
    original = timing.read_text()
    timing.write_text(original.replace("25.0", "2.5"))
    refused(results, figures, docs, readme, "mnist/timing.csv: sha256")
    timing.write_text(original)
    (figures / "fig3a_garland.png").write_bytes(b"\x89PNG another run's")
    refused(results, figures, docs, readme, "fig3a_garland.png: sha256")
    rerecord(results, figures)  # a run that left this figure
    edit_json(results / PROVENANCE_JSON, lambda p: p["output_sha256"]["figures"].pop("fig3c_mnist.png"))
    refused(
        results, figures, docs, readme, "no checksum of figures/fig3c_mnist.png: the recorded run did not"
    )
    rerecord(results, figures)
    ship.ship(results, figures, docs, readme)
    assert (docs / findings.FIGURES_DIR / "fig3a_garland.png").read_bytes() == b"\x89PNG another run's"


def edit_batch_records(path: Path, change) -> None:
    """Change the records of a batch file of the run store in place (its arrays as they were)."""
    with np.load(path) as archive:
        contents = {name: archive[name] for name in archive.files}
    records = json.loads(str(contents[RECORDS]))
    change(records)
    contents[RECORDS] = np.array(json.dumps(records))
    np.savez_compressed(path, **contents)


def test_ship_refuses_mixed_package_versions_naming_the_file_and_package(shipped):
    """The batch file the audit read (its spec names it), written by the real run job, read by
    ship's check through the run store's one reader."""
    results, figures, docs, readme = shipped
    spec = read_spec(ResultsFolder(str(results)).spec("audit", "audit"), AuditJob)
    ((batch,),) = (files for by_setting in spec.run_paths.values() for files in by_setting.values())
    assert read_batch(batch).record.runs[0].versions == package_versions()  # as the run job wrote it
    saved = Path(batch).read_bytes()
    edit_batch_records(Path(batch), lambda r: r["runs"][0]["versions"].update(numpy="1.0.0"))
    current = package_versions()["numpy"]
    named = (
        rf"{re.escape(batch)} was made with other package versions .*\(numpy 1.0.0 vs {re.escape(current)};"
    )
    refused(results, figures, docs, readme, named)
    Path(batch).write_bytes(saved)
    edit_json(
        results / AUDIT_JSON,
        lambda a: a["context"].update(versions={**package_versions(), "optuna": "4.0"}),
    )
    rerecord(results, figures)
    refused(
        results, figures, docs, readme, r"audit.json was made with other package versions .*optuna 4.0 vs"
    )
    no_scipy = {**package_versions(), "scipy": None}  # a package the audit's install lacked
    edit_json(results / AUDIT_JSON, lambda a: a["context"].update(versions=no_scipy))
    rerecord(results, figures)
    refused(results, figures, docs, readme, r"audit.json was made with other package versions .*scipy None")
    edit_json(results / AUDIT_JSON, lambda a: a["context"].update(versions=package_versions()))
    rerecord(results, figures)
    # the batch files are read through the store's one reader: one it cannot read is refused, named
    edit_batch_records(Path(batch), lambda r: r.update(format=0))
    unreadable = rf"batch file {re.escape(batch)}: its records are not valid .*format 0, but batch files"
    refused(results, figures, docs, readme, unreadable)
    Path(batch).unlink()
    refused(results, figures, docs, readme, rf"batch file {re.escape(batch)}: cannot be read")
    Path(batch).write_bytes(saved)
    ship.ship(results, figures, docs, readme)
    shipped_prov = json.loads((docs / findings.DATA_DIR / PROVENANCE_JSON).read_text())
    assert shipped_prov["versions"] == package_versions()


def test_ship_refuses_a_run_whose_audit_spec_is_missing(shipped):
    """What runs the audit read is in its spec file: without it the versions cannot be checked."""
    results, figures, docs, readme = shipped
    spec = Path(ResultsFolder(str(results)).spec("audit", "audit"))
    spec.unlink()
    refused(
        results, figures, docs, readme, rf"{re.escape(str(spec))} is missing: the audit's spec names the runs"
    )


# ---------------------------------------------------------------- the scale
def reduce_to(results: Path, figures: Path, seeds: int) -> None:
    """Make the made-up run one of ``seeds`` seeds (audit and aggregates), as its recorder saw it."""
    edit_json(
        results / AUDIT_JSON,
        lambda a: [
            part.update(seeds=list(range(seeds)))
            for e in a["context"]["experiments"].values()
            for part in (e, *e["settings"].values())
        ],
    )
    for final in (results / "aggregates").glob("*/final.csv"):
        table = pd.read_csv(final)
        table["n_seeds"] = seeds
        table.to_csv(final, index=False)
    rerecord(results, figures)


def test_scale_is_read_from_the_audits_seeds_against_the_claims_minimum():
    claims = [
        {
            "id": f"C{n}",
            "quote": "q",
            "location": "l",
            "verdict": "reproduced",
            "reason": "r",
            "coverage": "a",
            "min_seeds": n,
        }
        for n in (20, 10)
    ]
    experiments = {"a": {"seeds": list(range(20))}, "b": {"seeds": [0, 1]}}
    data = complete(
        {
            "format": AUDIT_FORMAT,
            "claims": claims,
            "sensitivity": [],
            "discrepancies": [],
            "reading_flips": [],
            "flipped_claims": [],
            "context": {"experiments": experiments},
        }
    )
    audit = parse_audit(data)
    assert (audit.paper_seeds, audit.below_paper(), seeds_span(audit)) == (20, {"b": 2}, "2 to 20")
    data["context"]["experiments"]["b"]["seeds"] = list(range(25))
    assert not parse_audit(data).below_paper()


def test_a_reduced_run_is_refused_unless_told_and_then_never_called_paper_scale(shipped):
    results, figures, docs, readme = shipped
    assert "At the paper's scale" in ship.readme_block(docs)  # the first run: 20 seeds, as the claims need
    reduce_to(results, figures, 2)
    short = r"not a paper-scale run: experiment\(s\) garland \(2\), mnist \(2\) ran fewer seeds than the 20 "
    refused(results, figures, docs, readme, short + ".*--reduced")
    ship.ship(results, figures, docs, readme, reduced=True)
    block = ship.readme_block(docs)
    assert block in readme.read_text()
    assert block.startswith(
        f"{findings.README_BEGIN}\n**At reduced scale (2 seeds; the audited claims need 20)"
    )
    assert "paper's scale" not in block and "paper's scale" not in readme.read_text()
    assert "At 2 seeds per curve" in (docs / findings.DOCUMENT).read_text()


def cli_args(results: Path, figures: Path, docs: Path, readme: Path) -> list[str]:
    """The command line of `python -m vhct.reporting.ship` for one made-up run."""
    paths = {"--results": results, "--figures": figures, "--docs": docs, "--readme": readme}
    return [part for flag, path in paths.items() for part in (flag, str(path))]


def test_the_probe_a_tiny_config_run_is_refused_by_the_command_line(shipped, capsys):
    """`make figures CONFIG=config/tiny.yaml` under the recorder, then `make findings`: refused, rc 1."""
    results, figures, docs, readme = shipped
    reduce_to(results, figures, 2)
    before = snapshot(docs), readme.read_bytes()
    args = cli_args(results, figures, docs, readme)
    assert ship.main(args) == 1
    assert "not a paper-scale run" in capsys.readouterr().err
    assert (snapshot(docs), readme.read_bytes()) == before
    assert ship.main([*args, "--reduced"]) == 0


# ---------------------------------------------------------------- --docs and --readme
def test_docs_elsewhere_never_touches_the_working_directorys_readme(shipped, tmp_path, monkeypatch):
    results, figures, _, _ = shipped
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text(README_TEXT)
    monkeypatch.chdir(work)
    other = tmp_path / "other"
    assert ship.main(["--results", str(results), "--figures", str(figures), "--docs", str(other)]) == 0
    assert (work / "README.md").read_text() == README_TEXT and sorted(os.listdir(work)) == ["README.md"]
    assert (other / findings.DOCUMENT).is_file()
    named = tmp_path / "named-README.md"
    named.write_text(README_TEXT)
    args = [
        "--results",
        str(results),
        "--figures",
        str(figures),
        "--docs",
        str(other),
        "--readme",
        str(named),
    ]
    assert ship.main(args) == 0
    assert ship.readme_block(other) in named.read_text() and (work / "README.md").read_text() == README_TEXT
    assert ship.default_readme(Path("docs"), None) == Path("README.md")  # the repository's, by default
    assert ship.default_readme(other, None) is None


# ---------------------------------------------------------------- crash safety
def test_leftover_staging_without_a_journal_is_removed_by_the_next_ship(shipped):
    results, figures, docs, readme = shipped
    stale = docs / f"{ship.STAGE_PREFIX}killed"
    (stale / findings.DATA_DIR).mkdir(parents=True)
    (stale / findings.DOCUMENT).write_text("half a document")
    ship.ship(results, figures, docs, readme)
    assert not stale.exists() and not list(docs.glob(".findings-*"))


def state(docs: Path, readme: Path) -> dict[str, bytes]:
    return {**snapshot(docs), "README": readme.read_bytes()}


def killed_after(step: int, args: list[str]) -> int:
    """Run ``ship.main(args)`` in a forked child that ends abruptly (``os._exit``, no clean-up, as a
    SIGKILL) right after its ``step``-th change on disk; return its exit status (99: ended there)."""
    pid = os.fork()
    if pid == 0:  # the child: its own step count from 0
        code = 1
        try:
            os.environ[ship.EXIT_AFTER_ENV] = str(step)
            ship._steps = 0
            code = ship.main(args)
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_kill_at_every_step_leaves_the_old_or_the_new_findings(shipped, tmp_path):
    """Ship ends abruptly after its N-th change on disk, for every N: the next command finds docs/
    and the README entirely old or entirely new, no staging left, and the next ship ships."""
    results, figures, docs, readme = shipped
    old = state(docs, readme)
    pristine = tmp_path / "pristine"
    shutil.copytree(docs, pristine / "docs")
    shutil.copy(readme, pristine / "README.md")
    edit_json(results / AUDIT_JSON, lambda a: a["claims"][1].update(verdict="reproduced"))
    rerecord(results, figures)  # a second run whose headline differs
    ship.ship(results, figures, docs, readme)
    new = state(docs, readme)
    assert old != new and old["README"] != new["README"]
    seen = {"old": 0, "new": 0}
    for n in range(1, 100):
        where = tmp_path / f"kill{n}"
        shutil.copytree(pristine, where)
        d, r = where / "docs", where / "README.md"
        args = ["--results", str(results), "--figures", str(figures), "--docs", str(d), "--readme", str(r)]
        code = killed_after(n, args)
        if code == 0:  # it got through all of its steps: nothing left to kill
            assert state(d, r) == new
            break
        assert code == 99, n
        recovered = ship.main(["recover", "--docs", str(d), "--readme", str(r)])
        assert recovered == 0  # what every command does first
        after = state(d, r)
        assert after in (old, new), f"kill after step {n}: neither the old nor the new findings"
        seen["old" if after == old else "new"] += 1
        assert not list(d.glob(".findings-*")), n  # no stage, no journal left
        assert ship.main(args) == 0 and state(d, r) == new, n
        shutil.rmtree(where)
    else:
        pytest.fail("ship never finished")
    assert seen["old"] >= 5 and seen["new"] >= 5, seen  # kills before and after the commit point


def test_ship_continues_an_interrupted_swap_itself(shipped, tmp_path):
    """Killed after the journal and one rename: the next ship (not a recover) completes it first."""
    results, figures, docs, readme = shipped
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    args = cli_args(results, figures, docs, readme)
    code = (
        "import sys; from vhct.reporting import ship; "
        "orig = ship._commit\n"
        "def commit(*a):\n    import os; os.environ[ship.EXIT_AFTER_ENV] = str(ship._steps + 2); orig(*a)\n"
        f"ship._commit = commit; sys.exit(ship.main({args!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 99, done.stderr
    assert (docs / ship.JOURNAL).is_file() and not (docs / findings.DATA_DIR).exists()  # mid-swap
    ship.ship(results, figures, docs, readme)
    assert (docs / findings.DOCUMENT).read_text() == findings.render(docs)
    assert ship.readme_block(docs) in readme.read_text() and not list(docs.glob(".findings-*"))


# ---------------------------------------------------------------- the provenance recorder
def test_provenance_records_a_successful_command_only(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out, seen = tmp_path / "prov.json", tmp_path / "run-id"
    write_id = (
        "import os, sys, pathlib; open(sys.argv[1], 'w').write(os.environ['VHCT_RUN_ID']); "
        "p = pathlib.Path(sys.argv[1]).parent; (p / 'audit.json').write_text('{}'); "
        "(p / 'aggregates' / 'g').mkdir(parents=True); (p / 'aggregates' / 'g' / 'final.csv').write_text('a')"
        "\nheld = b'x' * (300 * 2**20)"  # 300 MB written, so resident: the peak the recorder must see
    )
    ok = [sys.executable, "-c", write_id, str(seen), "--configfile", "config/paper-local.yaml"]
    assert provenance.main([str(out), "--", *ok]) == 0
    record = json.loads(out.read_text())
    chain = ["config/config.yaml", "config/paper.yaml", "config/paper-local.yaml"]  # bases first
    assert record["config_files"] == chain
    assert record["config_sha256"] == {p: hashlib.sha256((REPO / p).read_bytes()).hexdigest() for p in chain}
    declared = list(yaml.safe_load((REPO / "config" / "config.yaml").read_text())["figures"])
    assert record["figures"] == [*declared, *AUDIT_FIGURES]  # the config's figures and the audit's
    assert record["run_id"] == seen.read_text()  # the command's jobs see the run's id
    started = datetime.fromisoformat(record["started_utc"])
    assert datetime.fromisoformat(record["finished_utc"]) >= started
    assert record["wall_seconds"] >= 0 and record["machine"]["cpus"] >= 1
    assert record["max_rss_mb"] >= 300  # the command's largest process (here the only one)
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"])
    # the versions that shape the numbers, and the outputs as the command left them
    assert record["versions"] == package_versions() and record["versions"]["numpy"]
    assert record["output_sha256"]["results"] == {
        "audit.json": hashlib.sha256(b"{}").hexdigest(),
        "aggregates/g/final.csv": hashlib.sha256(b"a").hexdigest(),
    }
    failed = tmp_path / "failed.json"
    assert provenance.main([str(failed), "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert not failed.exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text("progress_every: 5\n")
    ran = tmp_path / "ran"
    touch = [sys.executable, "-c", f"open({str(ran)!r}, 'w')", "--configfile", str(bad)]
    assert provenance.main([str(failed), "--", *touch]) == 1  # an invalid config: nothing runs
    assert not ran.exists() and not failed.exists()


def test_a_recorder_around_a_rerun_covers_only_what_it_made_and_ship_refuses_the_rest(shipped, monkeypatch):
    """Issue 39: a recorder wrapped around a rerun that remade only the audit recorded the older run's
    aggregates and figures as its own, and ship accepted them; the record now covers only what its
    command wrote, and ship refuses the rest, saying how to make them again."""
    results, figures, docs, readme = shipped
    declared = json.loads((results / PROVENANCE_JSON).read_text())["figures"]
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(provenance, "figures_folder", lambda files: figures)
    hour_ago = datetime.now().timestamp() - 3600
    for path in [*results.rglob("*"), *figures.rglob("*")]:  # the earlier run's outputs
        os.utime(path, (hour_ago, hour_ago))
    rerun = (  # the audit alone made again (JSON and verdict table), under the recorder's run id
        "import json, os, sys; p, t = sys.argv[1:3]; a = json.load(open(p)); "
        "a['context']['run_id'] = os.environ['VHCT_RUN_ID']; open(p, 'w').write(json.dumps(a)); "
        "c = open(t).read(); open(t, 'w').write(c)"
    )
    audit, table = results / AUDIT_JSON, results / VERDICTS_CSV
    command = [sys.executable, "-c", rerun, str(audit), str(table), "--configfile", "config/paper-local.yaml"]
    assert provenance.main([str(results / PROVENANCE_JSON), "--", *command]) == 0
    record = json.loads((results / PROVENANCE_JSON).read_text())
    made = {n: hashlib.sha256((results / n).read_bytes()).hexdigest() for n in ("audit.json", "verdicts.csv")}
    assert record["output_sha256"] == {"results": made, "figures": {}}
    # the made-up run's figures (as made_up_run records them), the rest as the recorder wrote it
    edit_json(results / PROVENANCE_JSON, lambda p: p.update(figures=declared))
    refused(
        results,
        figures,
        docs,
        readme,
        r"final\.csv: the provenance record has no checksum of results/aggregates/\w+/final\.csv: the "
        r"recorded run did not make it .*`" + re.escape(provenance.REMAKE_OUTPUTS) + "`, then ship",
    )


def test_ship_caches_only_the_curves_the_run_made(shipped):
    """A setting no figure draws has no curve (the pipeline aggregates a setting's curve for the
    figures that draw it, paper-local's variant settings among them): nothing to ship, not refused."""
    results, figures, docs, readme = shipped
    prov_path = results / PROVENANCE_JSON
    prov = json.loads(prov_path.read_text())
    undrawn = [ResultsFolder("").setting_table("mnist", "BO", t) for t in SETTING_TABLES]
    for rel in undrawn:
        (results / rel).unlink()
        del prov["output_sha256"]["results"][rel]
    prov_path.write_text(json.dumps(prov))
    ship.ship(results, figures, docs, readme)
    assert not any((docs / findings.DATA_DIR / rel).exists() for rel in undrawn)
    kept = ResultsFolder("").setting_table("garland", "BO", SETTING_TABLES[0])
    assert (docs / findings.DATA_DIR / kept).read_bytes() == (results / kept).read_bytes()


def test_a_run_without_a_verdict_table_ships_without_one(shipped):
    """A run whose audit predates the verdict table (its record hashes none): shipped as it is, the
    findings not linking a table; a run that made one ships it (test_findings)."""
    results, figures, docs, readme = shipped
    prov_path = results / PROVENANCE_JSON
    prov = json.loads(prov_path.read_text())
    del prov["output_sha256"]["results"][VERDICTS_CSV]
    prov_path.write_text(json.dumps(prov))
    shipped_files = ship.ship(results, figures, docs, readme)
    assert not (docs / findings.DATA_DIR / VERDICTS_CSV).exists()
    assert all(p.name != VERDICTS_CSV for p in shipped_files)
    assert VERDICTS_CSV not in (docs / findings.DOCUMENT).read_text(encoding="utf-8")


def test_output_hashes_cover_the_audit_the_aggregates_and_the_declared_figures(tmp_path):
    results, figures = made_up_run(tmp_path)
    hashes = provenance.output_hashes(results, figures, ["fig3a_garland", "fig3c_mnist", "absent"])
    assert sorted(hashes["figures"]) == [
        "fig3a_garland.png",
        "fig3c_mnist.png",
    ]  # not tiny_regret, not absent
    assert sorted(hashes["results"]) == sorted(
        [
            "aggregates/garland/final.csv",
            "aggregates/garland/timing.csv",
            "aggregates/mnist/final.csv",
            "aggregates/mnist/timing.csv",
            "audit.json",
            "verdicts.csv",
        ]
        + [  # each setting's curve and timing: the results cache
            ResultsFolder("").setting_table(e, s, t)
            for e in ("garland", "mnist")
            for s in ("BO", "VHCT-rho0.75")
            for t in SETTING_TABLES
        ]
    )
    assert (
        hashes["results"]["audit.json"] == hashlib.sha256((results / "audit.json").read_bytes()).hexdigest()
    )


# ---------------------------------------------------------------- the journal names only its docs folder
def planted_journal(docs: Path, **fields) -> Path:
    """A journal planted in ``docs`` (with a staging folder holding a new README) as a file in a
    clone could hold it; ``fields`` replace the ones a ship writes."""
    stage = docs / f"{ship.STAGE_PREFIX}planted"
    stage.mkdir()
    (stage / ship.NEW_README).write_text("overwritten by the journal\n")
    journal = {"stage": stage.name, "names": [findings.DOCUMENT], "readme": True, **fields}
    (docs / ship.JOURNAL).write_text(json.dumps(journal))
    return stage


@pytest.mark.parametrize(
    "fields",
    [
        {"readme": "{victim}"},  # the former format: an absolute README path
        {"stage": "{outside}"},  # an absolute stage
        {"stage": f"{ship.STAGE_PREFIX}planted/../../outside"},
        {"names": ["../outside"]},
        {"names": ["{victim}"]},
        {"names": ["README.md"]},  # not an entry a swap replaces
        {"readme": 1},
    ],
)
def test_a_journal_naming_anything_outside_its_docs_folder_is_refused(shipped, tmp_path, fields):
    """The probe: a journal planted in docs/ naming /tmp/victim (or a stage, an entry outside) was
    rolled forward by every ship, render and recover, overwriting the file it named."""
    results, figures, docs, readme = shipped
    victim, outside = tmp_path / "victim", tmp_path / "outside"
    victim.write_text("precious\n")
    outside.mkdir()
    (outside / "x").write_text("outside\n")
    named = {"victim": victim, "outside": outside}
    values = {k: v.format(**named) if isinstance(v, str) else v for k, v in fields.items()}
    if "names" in values:
        values["names"] = [n.format(victim=victim) for n in values["names"]]
    planted_journal(docs, **values)
    before = state(docs, readme), victim.read_bytes(), snapshot(outside)
    for call in (
        lambda: ship.ship(results, figures, docs, readme),
        lambda: ship.rewrite(docs, readme),
        lambda: ship.recover(docs, readme),
    ):
        with pytest.raises(FindingsError, match=r"journal\.json: .*nothing was changed, delete it"):
            call()
        assert (state(docs, readme), victim.read_bytes(), snapshot(outside)) == before


def test_a_journal_or_stage_that_is_a_symbolic_link_is_refused(shipped, tmp_path):
    results, figures, docs, readme = shipped
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / findings.DOCUMENT).write_text("outside\n")
    stage = planted_journal(docs)
    shutil.rmtree(stage)
    stage.symlink_to(outside)  # the stage: a link out of docs/
    before = state(docs, readme), snapshot(outside)
    with pytest.raises(FindingsError, match="is not a folder in"):
        ship.recover(docs, readme)
    stage.unlink()
    stage.mkdir()
    (stage / findings.DOCUMENT).symlink_to(outside / findings.DOCUMENT)  # an entry: a link out
    with pytest.raises(FindingsError, match=f"{findings.DOCUMENT} is a symbolic link"):
        ship.recover(docs, readme)
    (stage / findings.DOCUMENT).unlink()
    journal = (docs / ship.JOURNAL).read_text()
    (docs / ship.JOURNAL).unlink()
    (tmp_path / "journal.json").write_text(journal)
    (docs / ship.JOURNAL).symlink_to(tmp_path / "journal.json")  # the journal itself: a link
    with pytest.raises(FindingsError, match="is a symbolic link"):
        ship.ship(results, figures, docs, readme)
    assert (state(docs, readme), snapshot(outside)) == before
    assert (tmp_path / "journal.json").read_text() == journal


def test_the_probe_a_journal_committed_after_a_kill_never_touches_the_first_clones_readme(shipped, tmp_path):
    """Killed after its commit point, a ship's docs/ (journal and stage included) is copied into
    another clone, as `git add -f` and a clone would: recovered there, it replaces the second clone's
    README (the one its command names), and the first clone's README keeps its bytes."""
    results, figures, docs, readme = shipped
    edit_json(results / AUDIT_JSON, lambda a: a["claims"][1].update(verdict="reproduced"))
    rerecord(results, figures)
    pid = os.fork()
    if pid == 0:  # the child: killed right after its commit point (the journal written)
        code = 1
        try:
            commit = ship._commit

            def killed(*args):
                os.environ[ship.EXIT_AFTER_ENV] = str(ship._steps + 1)
                commit(*args)

            ship._commit = killed
            code = ship.main(cli_args(results, figures, docs, readme))
        finally:
            os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    assert code == 99 and (docs / ship.JOURNAL).is_file()  # killed mid-swap, the README not yet replaced
    journal = (docs / ship.JOURNAL).read_text()
    assert "README" not in journal and str(tmp_path) not in journal  # no path outside docs/
    first_readme = readme.read_bytes()
    clone = tmp_path / "clone"
    shutil.copytree(docs, clone / "docs", symlinks=True)
    (clone / "README.md").write_text(README_TEXT)
    assert ship.main(["recover", "--docs", str(clone / "docs"), "--readme", str(clone / "README.md")]) == 0
    assert readme.read_bytes() == first_readme  # the first clone's README: untouched
    assert ship.readme_block(clone / "docs") in (clone / "README.md").read_text()
    assert not list((clone / "docs").glob(".findings-*"))
    with pytest.raises(FindingsError, match="replaces a README too: give it"):
        ship.recover(docs)  # the README is the command's to name: none given, nothing changed
    assert (docs / ship.JOURNAL).is_file() and readme.read_bytes() == first_readme


def test_the_journal_and_the_staging_folders_are_git_ignored():
    paths = ["docs/.findings-journal.json", f"docs/{ship.STAGE_PREFIX}abc_1/findings.md"]
    done = subprocess.run(["git", "check-ignore", *paths], cwd=REPO, capture_output=True, text=True)
    assert done.stdout.split() == paths, done.stderr


def test_docs_that_is_a_file_is_refused_with_one_line(shipped, tmp_path, capsys):
    """The probe: `ship --docs FILE` raised FileExistsError (and `render`, `recover` a traceback)."""
    results, figures, _, readme = shipped
    file = tmp_path / "notes.txt"
    file.write_text("a file\n")
    before = readme.read_bytes()
    for action in ("ship", "render", "recover"):
        args = [action, *cli_args(results, figures, file, readme)]
        assert ship.main(args) == 1, action
        err = capsys.readouterr().err
        assert (
            err == f"the docs folder {file} is a file, not a folder (--docs names the folder to ship into)\n"
        )
    assert file.read_text() == "a file\n" and readme.read_bytes() == before
