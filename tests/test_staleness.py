"""`tilec build --check` (tilec/staleness.py) on a committed manifest.json that is valid JSON but not
what tilec writes: the check reports the folder stale with a rebuild command, never a traceback."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import ROOT
from tilec import staleness
from tilec.cli import main

GEMM = str(ROOT / "samples/gemm.py")
FLAGS = {"block_dim": 256, "target": "all", "debug": False, "max_shared": None, "emit_only": False}


@pytest.mark.parametrize("text", ["[1, 2]\n", '"manifest"\n', "3\n", "null\n"])
def test_compare_records_nothing_from_a_manifest_that_is_not_an_object(tmp_path, text):
    (tmp_path / "manifest.json").write_text(text)
    result = staleness.compare({"manifest.json": json.dumps({"module": "m"}) + "\n"}, tmp_path)
    assert result.recorded == {} and result.changed == ["manifest.json"] and result.stale
    assert staleness.rebuild_command("m.py", "out", result.recorded, FLAGS) == "tilec build m.py -o out"


def test_malformed_manifest_fields_are_ignored_not_crashed_on():
    weird = {"kernels": [1], "cuda_build": "sm_90", "flags": {"cuda_archs": "sm_80", "block_dim": 128}}
    comparable = json.loads(staleness.comparable_manifest(json.dumps(weird)))
    assert comparable == {"kernels": [1], "flags": {"cuda_archs": "sm_80", "block_dim": 128}}  # measured facts out
    # a string of archs is not joined letter by letter; the recorded block_dim still counts
    assert staleness.rebuild_command("m.py", "out", weird, FLAGS) == "tilec build m.py -o out --block-dim 128"
    recorded = {"cuda_build": {"archs": ["sm_90"]}}
    assert staleness.rebuild_command("m.py", "out", recorded, FLAGS) == "tilec build m.py -o out --arch sm_90"


def test_build_check_of_a_folder_whose_manifest_is_a_json_list(tmp_path):
    assert CliRunner().invoke(main, ["build", GEMM, "-o", str(tmp_path), "--emit-only", "--target", "cpu"]).exit_code == 0
    (tmp_path / "gemm" / "manifest.json").write_text("[]\n")
    result = CliRunner().invoke(main, ["build", GEMM, "-o", str(tmp_path), "--check"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.stdout.splitlines()[0] == "1 changed: manifest.json"
    assert result.stderr == (f"gemm: generated code in {tmp_path / 'gemm'} is stale; rebuild with "
                             f"`tilec build {GEMM} -o {tmp_path}`\n")
