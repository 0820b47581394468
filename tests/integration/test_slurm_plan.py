"""docs/slurm.md's table of what config/paper.yaml asks of a cluster is the dry run's.

``scripts/slurm/plan.py`` runs ``snakemake -n --profile workflow/profiles/slurm`` on the paper
config in an empty directory (about half a minute) and renders the table; the doc must hold
exactly that table between its markers (rewrite it: ``scripts/slurm/plan.py --write docs/slurm.md``).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from support import REPO

DOC = REPO / "docs" / "slurm.md"


def plan_module():
    spec = importlib.util.spec_from_file_location("slurm_plan", REPO / "scripts" / "slurm" / "plan.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def plan():
    return plan_module()


def test_the_docs_table_is_the_dry_run_of_the_paper_config(plan):
    planned = plan.parse(plan.dry_run(plan.CONFIG, plan.PROFILE), plan.local_rules())
    doc = DOC.read_text(encoding="utf-8")
    shown = doc.split(plan.BEGIN, 1)[1].split(plan.END, 1)[0].strip()
    assert shown == plan.table(planned, "config/paper.yaml"), (
        "docs/slurm.md differs from the dry run; rewrite it: scripts/slurm/plan.py --write docs/slurm.md"
    )
    # the partition-limit section quotes the MNIST batches as the dry run plans them
    mnist = planned.families["run mnist"]
    assert max(mnist.minutes) == 48 * 60 and f"the {mnist.jobs} MNIST batches" in doc
    assert "48 or 32 hours" in doc


def test_a_dry_run_without_jobs_or_runtimes_is_refused(plan):
    with pytest.raises(SystemExit, match="listed no job"):
        plan.parse("Building DAG of jobs...\nNothing to be done.\n", set())
    with pytest.raises(SystemExit, match=r"without a 'runtime'.*'figure'"):
        plan.parse("rule figure:\n    jobid: 1\n    resources: tmpdir=/tmp\n", set())


def test_jobs_in_a_group_count_as_one_cluster_job_and_local_rules_as_none(plan):
    text = "\n".join(
        [
            "rule run_a_batch0:",
            "    resources: tmpdir=/tmp, runtime=120",
            "[Thu Nov 26 14:59:14 2026] Group job runs-a-BO (jobs in lexicogr. order):",
            "    rule run:",
            "        resources: mem_mb=4000, runtime=30",
            "    rule run:",
            "        resources: mem_mb=4000, runtime=30",
            "rule verify_data:",
            "    resources: runtime=60",
            "rule audit_forest:",
            "    resources: runtime=10",
        ]
    )
    planned = plan.parse(text, {"verify_data"})
    assert (planned.jobs, planned.cluster_jobs) == (5, 3)
    assert planned.hours == pytest.approx((120 + 30 + 30 + 10) / 60)
    assert planned.local == {"verify_data": 1}
