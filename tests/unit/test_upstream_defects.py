"""The reproductions of PyXAB's defects (benchmarks/upstream_defects.py) and their reports (docs/upstream/).

PyXAB itself is not run here (it comes from the package registry): each report's pasted output is
checked against the script's rendering of the observations saved by the run it pastes
(``docs/upstream/evidence/``), the verdict against observations of correct behaviour, and the
correct-behaviour side against the schedules of Shang et al. and Grill et al. written out here.
"""

from __future__ import annotations

import copy
import json
import math
import re

import pytest
import upstream_defects as ud  # benchmarks/upstream_defects.py (pyproject: pytest pythonpath)
from support import REPO

UPSTREAM = REPO / "docs" / "upstream"
EVIDENCE = UPSTREAM / "evidence"
RHO_MAX = 0.9


def evidence(name: str) -> dict:
    return json.loads((EVIDENCE / f"{name}.json").read_text(encoding="utf-8"))


def pasted_output(name: str) -> str:
    """The first ```text block of the report: the script's output it pastes."""
    text = (UPSTREAM / f"{name}.md").read_text(encoding="utf-8")
    match = re.search(r"```text\n(.*?)\n```", text, re.DOTALL)
    assert match, f"docs/upstream/{name}.md has no ```text block"
    return match.group(1)


def test_every_defect_has_a_report_and_its_evidence_and_the_index_lists_them():
    reports = {p.stem for p in UPSTREAM.glob("*.md")} - {"README"}
    saved = {p.stem for p in EVIDENCE.glob("*.json")}
    assert reports == set(ud.DEFECTS) == saved
    index = (UPSTREAM / "README.md").read_text(encoding="utf-8")
    for name, defect in ud.DEFECTS.items():
        assert f"({name}.md)" in index, f"docs/upstream/README.md does not link {name}.md"
        report = (UPSTREAM / f"{name}.md").read_text(encoding="utf-8")
        assert report.splitlines()[0] == f"# PyXAB {ud.PYXAB_VERSION}: {defect.title}"
        assert f"python benchmarks/upstream_defects.py --defect {name}" in report


@pytest.mark.parametrize("name", list(ud.DEFECTS))
def test_each_report_pastes_what_the_script_prints_for_the_saved_run(name):
    saved = evidence(name)
    assert saved["version"] == ud.PYXAB_VERSION
    # the saved run is the one the script makes by default
    assert [run["spec"] for run in saved["runs"]] == ud.DEFECTS[name].specs(ud.ROUNDS)
    printed = ud.report(name, saved)
    assert pasted_output(name) == printed
    assert f"Verdict: {ud.PRESENT}" in printed


# -- the verdict follows the observations: correct behaviour gives "not reproduced" ----------------
def correct_reexpansion(saved: dict) -> dict:
    fixed = copy.deepcopy(saved)
    for run in fixed["runs"]:
        out = run["out"]
        out.update(reexpansions=0, dropped_evaluations=0, first_event=None, largest_event=None)
        out["nodes_listed"] = out["nodes_reachable"]
    return fixed


def correct_gpo(saved: dict) -> dict:
    fixed = copy.deepcopy(saved)
    out = fixed["runs"][0]["out"]
    out["hct_rhos"] = [RHO_MAX ** (2 * out["N"] / (2 * i + 1)) for i in range(1, out["N"] + 1)]
    return fixed


def correct_poo(saved: dict) -> dict:
    """Observations as Grill et al.'s POO would give them (32 instances at n = 5000)."""
    fixed = copy.deepcopy(saved)
    out = fixed["runs"][0]["out"]
    want = ud.expected_poo(ud.ROUNDS)
    batch_of = [1] + [n for n in want.batches[1:] for _ in range(n)]
    out["instances"] = [{"rho": rho, "N": n, "i": 1} for rho, n in zip(want.rhos, batch_of, strict=True)]
    k = len(want.rhos)
    out["evaluations"] = [ud.ROUNDS // k + (i < ud.ROUNDS % k) for i in range(k)]
    out["reward_means"] = out["V_reward"] = [0.5] * k
    t, n = want.last_pass
    out["counts"] = [[t, n, want.n_instances, k]]
    return fixed


CORRECT = {"reexpansion": correct_reexpansion, "gpo-one-phase": correct_gpo, "poo-bookkeeping": correct_poo}


def test_every_defect_has_a_correct_behaviour_case():
    assert set(CORRECT) == set(ud.DEFECTS)


@pytest.mark.parametrize("name", list(ud.DEFECTS))
def test_observations_of_correct_behaviour_are_not_reported_as_the_defect(name):
    printed = ud.report(name, CORRECT[name](evidence(name)))
    assert f"Verdict: {ud.ABSENT}" in printed and ud.PRESENT not in printed


def poo_fault(fixed: dict, fault: str) -> dict:
    out = fixed["runs"][0]["out"]
    if fault == "instances":
        for key in ("instances", "evaluations", "reward_means", "V_reward"):
            out[key] = out[key][:-1]
    elif fault == "rho_max":
        out["instances"][0]["rho"] = RHO_MAX ** (4 / 3)
    elif fault == "n":
        out["counts"][-1][1] += out["counts"][-1][2]
    elif fault == "average":
        out["V_reward"] = [v + 0.01 for v in out["V_reward"]]
    return fixed


@pytest.mark.parametrize("fault", ["instances", "rho_max", "n", "average"])
def test_each_poo_fault_alone_is_reported(fault):
    printed = ud.render_poo(poo_fault(correct_poo(evidence("poo-bookkeeping")), fault))
    assert f"Verdict: {ud.PRESENT}" in printed


def test_one_internal_node_expanded_in_one_run_is_reported():
    fixed = correct_reexpansion(evidence("reexpansion"))
    fixed["runs"][0]["out"]["reexpansions"] = 1
    assert f"Verdict: {ud.PRESENT}" in ud.render_reexpansion(fixed)


# -- the correct-behaviour side: this project's GPO and POO, against the papers' schedules ---------
@pytest.mark.parametrize("rounds", [600, 5000])
def test_expected_gpo_is_shang_et_al_schedule(rounds):
    dmax = math.log(2) / math.log(1 / RHO_MAX)
    phases = math.ceil(0.5 * dmax * math.log((rounds / 2) / math.log(rounds / 2)))
    length = rounds // (2 * phases)
    want = ud.expected_gpo(rounds)
    assert (want.phases, want.phase_length, want.candidates) == (phases, length, phases)
    assert want.rhos == pytest.approx([RHO_MAX ** (2 * phases / (2 * i + 1)) for i in range(1, phases + 1)])
    assert want.cv_evaluations == [length] * phases


def test_expected_poo_is_grill_et_al_bookkeeping_at_5000():
    want = ud.expected_poo(5000)
    assert want.batches == [1, 1, 2, 4, 8, 16] and len(want.rhos) == want.n_instances == 32
    assert want.rhos[0] == RHO_MAX
    t, n = want.last_pass
    assert t == n and 5000 - want.n_instances < t <= 5000


def test_batches_and_index_ranges_group_instances_by_n():
    made = [{"rho": 0.8, "N": 2, "i": 1}] + [{"rho": 0.5, "N": 4, "i": i} for i in range(4)]
    assert ud.batches_of(made) == [1, 4]
    assert ud.index_ranges(made) == ["N=2: i=1", "N=4: i=0..3"]


# -- the driver's output and failures ------------------------------------------------------------
def test_observations_are_the_json_object_on_the_last_line():
    assert ud.parse_observations('warning: x\n{"a": 1}\n', "poo") == {"a": 1}
    for bad in ("", "Traceback ...", "[1, 2]"):
        with pytest.raises(ud.DriverError, match="^poo: the driver printed no JSON object"):
            ud.parse_observations(bad, "poo")


def test_a_failing_driver_gives_one_line_and_exit_status_1(capsys, tmp_path):
    failing = tmp_path / "python"
    failing.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named PyXAB' >&2\nexit 1\n")
    failing.chmod(0o755)
    status = ud.main(["--python", str(failing), "--defect", "gpo-one-phase"])
    out = capsys.readouterr().out
    assert status == 1 and out.count("\n") == 1
    assert out.startswith("Reproduction of gpo-one-phase failed:") and "No module named PyXAB" in out


def test_no_pyxab_gives_one_line_and_exit_status_1(capsys, monkeypatch):
    monkeypatch.setattr(ud, "pyxab_python", lambda workdir: None)
    assert ud.main(["--defect", "poo-bookkeeping"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "could not be installed" in out


def test_the_driver_is_shown_whole_and_compiles(capsys):
    assert ud.main(["--show-driver"]) == 0
    shown = capsys.readouterr().out
    assert shown == ud.DRIVER
    compile(shown, "driver.py", "exec")
    assert set(re.findall(r'"([a-z-]+)": (?:reexpansion|gpo_one_phase|poo_bookkeeping)\b', shown)) == set(
        ud.DEFECTS
    )
