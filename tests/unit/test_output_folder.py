"""Each config's outputs in a folder of its own: the key ``output``, by default the config file's name.

config/paper-local.yaml writes results/paper-local/, figures/paper-local/, logs/paper-local/; the
default config (config/config.yaml) results/, figures/, logs/ themselves. The pipeline run of two
configs side by side: tests/integration/test_side_by_side.py.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import BIN, REPO, TINY

from vhct.pipeline import config as vc
from vhct.pipeline import provenance
from vhct.reporting import ship

#: the provenance recorder's module (make paper-local runs the pipeline under it)
PROVENANCE = "vhct.pipeline.provenance"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def folders(*files: Path, **overrides) -> list[str]:
    # a folder is named without reading a config's analysis plan (paper-local's: tests/unit/test_plan.py)
    cfg, _ = vc.load(list(files), overrides or None, plan=False)
    return [cfg.folder(root) for root in vc.OUTPUT_ROOTS]


def test_the_folder_is_the_config_files_name_and_the_default_config_writes_at_the_top(tmp_path):
    mine = write(tmp_path / "paper-mine.yaml", f"base: {TINY}\n")
    assert folders(mine) == ["results/paper-mine", "figures/paper-mine", "logs/paper-mine"]
    assert folders(REPO / "config" / "paper-local.yaml")[:2] == ["results/paper-local", "figures/paper-local"]
    assert folders(REPO / vc.DEFAULT_CONFIG) == ["results", "figures", "logs"]  # today's paths
    # a copy of the default under another name is a config of one's own
    copy = tmp_path / "copy.yaml"
    shutil.copy(REPO / vc.DEFAULT_CONFIG, copy)
    assert folders(copy)[0] == "results/copy"
    # several files: the folder of the one given last
    assert folders(TINY, write(tmp_path / "more.yaml", "progress_every: 3\n"))[0] == "results/more"
    assert vc.load([mine])[0].source["output"] == "paper-mine"  # the jobs' config dict carries it


def test_the_key_output_names_the_folder_and_is_not_inherited_from_a_base(tmp_path):
    base = write(tmp_path / "base.yaml", f"base: {TINY}\noutput: shared\n")
    assert folders(base)[0] == "results/shared"
    child = write(tmp_path / "child.yaml", "base: base.yaml\nprogress_every: 7\n")
    assert folders(child)[0] == "results/child"  # not base's folder: its results would mix with them
    flat = write(tmp_path / "flat.yaml", "base: base.yaml\noutput: ''\n")
    assert folders(flat)[0] == "results"
    assert folders(child, output="other")[0] == "results/other"  # --config output=other


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("my config.yaml", "", "would be named after the file, but 'my config' is no folder name here"),
        ("runs.yaml", "", "would be named after the file, but 'runs' is a folder of the default config's"),
        ("x.yaml", "output: ../elsewhere\n", "config key output: '../elsewhere' is no folder name here"),
        ("x.yaml", "output: aggregates\n", "config key output: 'aggregates' is a folder of the default"),
    ],
)
def test_a_folder_name_the_pipeline_cannot_take_fails_naming_the_file(tmp_path, name, content, message):
    path = write(tmp_path / name, f"base: {TINY}\n{content}")
    with pytest.raises(vc.ConfigError, match="^" + str(path).replace(" ", "\\ ")) as info:
        vc.load([path])
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_command_line_prints_a_configs_folder(tmp_path, capsys):
    """``python -m vhct.pipeline.config --folder ROOT FILE`` (its main, in this process; the Makefile's
    use of it: test_make_paper_local_and_findings_use_the_paper_local_folders)."""
    from vhct.pipeline.config.cli import main

    mine = write(tmp_path / "mine.yaml", f"base: {TINY}\n")
    for root in vc.OUTPUT_ROOTS:
        assert main(["--folder", root, str(mine)]) == 0
        assert capsys.readouterr().out == f"{root}/mine\n"


def test_ship_takes_the_folders_make_paper_local_writes():
    assert folders(REPO / "config" / "paper-local.yaml")[:2] == [
        str(ship.DEFAULT_RESULTS),
        str(ship.DEFAULT_FIGURES),
    ]


def test_provenance_hashes_the_figures_of_the_commands_config(tmp_path, monkeypatch):
    """Before: the figures were read from figures/ whatever the config (another config's PNG)."""
    monkeypatch.chdir(tmp_path)
    mine = write(tmp_path / "mine.yaml", f"base: {TINY}\n")
    draw = (  # the command draws both configs' figure of that name
        "import pathlib; [(pathlib.Path(d) / 'regret.png').write_text(t) for d, t in "
        "(('figures', 'the default config'), ('figures/mine', 'mine'))]"
    )
    (tmp_path / "figures" / "mine").mkdir(parents=True)
    out = tmp_path / "results" / "mine" / "provenance.json"
    assert provenance.main([str(out), "--", sys.executable, "-c", draw, "--configfile", str(mine)]) == 0
    recorded = json.loads(out.read_text(encoding="utf-8"))["output_sha256"]["figures"]
    assert recorded["regret.png"] == hashlib.sha256(b"mine").hexdigest()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_provenance_records_the_commit_the_command_started_on(tmp_path, monkeypatch):
    """Before: the commit was read when the command finished, so a commit made during a run (or
    an edit left uncommitted) was recorded as the run's."""
    monkeypatch.chdir(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], check=True)
    mine = write(tmp_path / "mine.yaml", f"base: {TINY}\n")
    subprocess.run([*git, "add", "mine.yaml"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    start = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    during = (  # the command commits an edit, edits a tracked file again, and makes one result
        "import pathlib, subprocess; p = pathlib.Path('mine.yaml'); p.write_text(p.read_text() + '#\\n'); "
        f"subprocess.run({[*git, 'commit', '-qam', 'during']!r}, check=True); "
        "p.write_text(p.read_text() + '#\\n'); "
        "pathlib.Path('results/mine/audit.json').write_text('{}')"
    )
    (tmp_path / "results" / "mine").mkdir(parents=True)
    out = tmp_path / "results" / "mine" / "provenance.json"
    assert provenance.main([str(out), "--", sys.executable, "-c", during, "--configfile", str(mine)]) == 0
    recorded = json.loads(out.read_text(encoding="utf-8"))
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert head != start and recorded["commit"] == start and recorded["uncommitted_changes"] is False


@pytest.mark.integration  # make, and the commands it prints, run as subprocesses
@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_paper_local_and_findings_use_the_paper_local_folders(tmp_path):
    """The lines `make -n` prints, run with the pipeline's commands replaced by `echo`. Before: the
    provenance record went to results/provenance.json and ship read results/ and figures/."""
    stamp = tmp_path / "stamp"
    stamp.touch()
    make = ["make", "-n", "--no-print-directory", "-C", str(REPO), f"BIN={BIN}", f"STAMP={stamp}"]

    def echoed(target: str, *args: str) -> str:
        lines = subprocess.run([*make, target, *args], capture_output=True, text=True, check=True).stdout
        script = lines.replace(f"{BIN}/snakemake", "echo snakemake").replace(
            f"{BIN}/python -m vhct.reporting.ship", "echo ship"
        )
        script = script.replace(f"{BIN}/python -m vhct.pipeline.provenance", "echo provenance")
        kept = [line for line in script.splitlines() if "workdir_lock" not in line]
        done = subprocess.run(["sh", "-c", "\n".join(kept)], cwd=REPO, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    # make -n runs the recursive make of paper-local (itself printing only): the path as the shell made it
    planned = subprocess.run([*make, "paper-local"], capture_output=True, text=True, check=True).stdout
    lines = [shlex.split(line) for line in planned.splitlines() if line.startswith("'")]  # the sub-make's
    (recorder,) = [words for words in lines if words[1:3] == ["-m", PROVENANCE]]
    assert recorder[3:5] == ["results/paper-local/provenance.json", "--"]
    shipped = shlex.split(next(line for line in echoed("findings").splitlines() if line.startswith("ship")))
    assert shipped[1:5] == ["--results", "results/paper-local", "--figures", "figures/paper-local"]
    real = echoed("real-data", "CONFIG=config/paper-local.yaml").split()
    assert real[-2:] == ["figures/paper-local/fig3b_landmine.pdf", "figures/paper-local/fig3c_mnist.pdf"]
    assert echoed("real-data").split()[-2:] == ["figures/fig3b_landmine.pdf", "figures/fig3c_mnist.pdf"]


def test_two_configs_writing_one_folder_differently_are_refused_naming_both(tmp_path, monkeypatch, capsys):
    """Probe (issue 51): a second config with ``output: tiny`` overwrote tiny's results. The first
    config to write a folder owns it; another that would write it differently is refused before any
    job, by ``python -m vhct.pipeline.config`` (make's check) and by the rules (``claim_owner``),
    naming both; one whose effective config is the owner's writes the same outputs and may run."""
    monkeypatch.chdir(tmp_path)
    tiny = write(tmp_path / "config" / "tiny.yaml", TINY.read_text(encoding="utf-8"))
    mine = write(tmp_path / "config" / "mine.yaml", "base: tiny.yaml\noutput: tiny\nprogress_every: 7\n")
    same = write(tmp_path / "config" / "same.yaml", "base: tiny.yaml\noutput: tiny\n")
    cfg, paths = vc.load([tiny], plan=False)
    vc.claim_owner(cfg.folder(vc.OWNER_ROOT), paths, cfg.source)
    assert vc.main([str(mine)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "config/mine.yaml" in err and "config/tiny.yaml" in err
    other, other_paths = vc.load([mine], plan=False)
    with pytest.raises(vc.ConfigError, match="holds those of config/tiny.yaml"):
        vc.claim_owner(other.folder(vc.OWNER_ROOT), other_paths, other.source)
    assert vc.main([str(same)]) == 0  # the same effective config: the same outputs
    # the owner's own file, edited, stays the owner (its reruns replace what changed)
    text = tiny.read_text(encoding="utf-8")
    tiny.write_text(text.replace("progress_every:", "progress_every: 9 #", 1), encoding="utf-8")
    edited, edited_paths = vc.load([tiny], plan=False)
    vc.claim_owner(edited.folder(vc.OWNER_ROOT), edited_paths, edited.source)
    assert json.loads((tmp_path / "results" / "tiny" / ".config-owner.json").read_text())["config"] == (
        "config/tiny.yaml"
    )
