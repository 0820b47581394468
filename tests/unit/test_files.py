"""The file helpers every record of a file goes through: its sha256 and the path it is named by."""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vhct.pipeline import provenance
from vhct.pipeline.files import display_path, sha256
from vhct.reporting.findings import FindingsError
from vhct.reporting.ship_checks import check_hashes

#: larger than hashlib.file_digest's read buffer (256 KiB), so the file is hashed in several chunks
SEVERAL_CHUNKS = 3 * 2**18 + 7


def test_sha256_is_the_digest_of_the_whole_file(tmp_path):
    path = tmp_path / "big.bin"
    data = os.urandom(SEVERAL_CHUNKS)
    path.write_bytes(data)
    assert sha256(path) == hashlib.sha256(data).hexdigest()
    assert sha256(str(path)) == sha256(path)
    (tmp_path / "empty").write_bytes(b"")
    assert sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()


def test_display_path_is_relative_inside_the_working_directory_else_absolute(tmp_path, monkeypatch):
    inside = tmp_path / "work" / "config" / "a.yaml"
    inside.parent.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert display_path(inside) == display_path("config/a.yaml") == "config/a.yaml"
    outside = tmp_path / "elsewhere.yaml"
    assert display_path(outside) == str(outside) and Path(display_path(outside)).is_absolute()


def test_what_the_recorder_hashes_ship_checks_with_the_same_function(tmp_path):
    """Writer meets reader: the provenance recorder's checksums pass ship's check, an edit does not."""
    results, figures = tmp_path / "results", tmp_path / "figures"
    (results / "aggregates" / "g").mkdir(parents=True)
    figures.mkdir()
    final = results / "aggregates" / "g" / "final.csv"
    final.write_text("setting,final_mean\nA,1.5\n")
    (figures / "f.png").write_bytes(b"\x89PNG f")
    config = {"config_files": [], "config_sha256": {}, "figures": ["f"]}
    outputs = provenance.output_hashes(results, figures, ["f"])
    prov = provenance.record(["true"], datetime.now(UTC), 1.0, config, outputs=outputs)
    files = {final: ("results", "aggregates/g/final.csv"), figures / "f.png": ("figures", "f.png")}
    check_hashes(prov, files)
    assert (
        prov.output_sha256.results["aggregates/g/final.csv"] == hashlib.sha256(final.read_bytes()).hexdigest()
    )
    final.write_text("setting,final_mean\nA,1.25\n")
    edited = rf"{re.escape(str(final))}: sha256 \w+\.\.\., the recorded run left"
    with pytest.raises(FindingsError, match=edited):
        check_hashes(prov, files)
