"""The no-op rebuild's shortcut (uptodate.py): an unchanged rebuild answers "up to date" without
compiling the source (libcst, numpy and the frontend stay unloaded), and still re-verifies every
artefact; any change, or a build that printed a diagnostic, takes the full path."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import needs_cxx

pytestmark = [pytest.mark.build, needs_cxx]

PROGRAM = '''import warp as wp


@wp.kernel
def scale(A: wp.array(dtype=float), B: wp.array(dtype=float)):
    i = wp.tid()
    B[i] = A[i] * {factor}
'''

# runs the command line in-process, then lists the heavy modules it imported
BUILD = ("import sys, tilec.cli as c\n"
         "try:\n    c.main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
         "print('loaded:', sorted(m for m in ('libcst', 'numpy', 'jinja2', 'tilec.pipeline') if m in sys.modules))\n")


def build(tmp_path, *extra, factor="2.0"):
    src = tmp_path / "scaled.py"
    if not src.exists() or factor != "2.0":
        src.write_text(PROGRAM.format(factor=factor))
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", BUILD, "build", str(src), "-o", str(tmp_path / "out"),
                           "--target", "cpu", *extra], capture_output=True, text=True, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def loaded(proc) -> list:
    return json.loads(proc.stdout.rsplit("loaded: ", 1)[1].replace("'", '"'))


def test_unchanged_rebuild_skips_the_compiler_front_end(tmp_path):
    first = build(tmp_path)
    assert "scaled: built" in first.stdout and "libcst" in loaded(first)
    so = tmp_path / "out/scaled/libscaled_cpu.so"
    before = so.stat().st_mtime_ns
    again = build(tmp_path)
    assert "scaled: up to date" in again.stdout, again.stdout + again.stderr
    assert loaded(again) == []
    assert so.stat().st_mtime_ns == before


def test_corrupted_artefacts_are_rebuilt_not_up_to_date(tmp_path):
    build(tmp_path)
    so = tmp_path / "out/scaled/libscaled_cpu.so"
    data = so.read_bytes()
    so.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # same size, one bit changed
    again = build(tmp_path)
    assert "scaled: built" in again.stdout, again.stdout
    header = tmp_path / "out/scaled/scaled.h"
    header.write_text(header.read_text() + "// edited\n")
    assert "scaled: built" in build(tmp_path).stdout
    assert "up to date" in build(tmp_path).stdout


def test_a_changed_source_flag_or_manifest_takes_the_full_path(tmp_path):
    build(tmp_path)
    changed = build(tmp_path, factor="3.0")
    assert "scaled: built" in changed.stdout and "libcst" in loaded(changed)
    assert "scaled: built" in build(tmp_path, "--block-dim", "64", factor="3.0").stdout
    manifest = tmp_path / "out/scaled/manifest.json"
    manifest.write_text(manifest.read_text().replace('"block_dim": 64', '"block_dim": 65'))
    assert "libcst" in loaded(build(tmp_path, "--block-dim", "64", factor="3.0"))  # the full path decides


def test_leftovers_of_an_interrupted_build_are_cleaned_by_the_full_path(tmp_path):
    build(tmp_path)
    leftover = tmp_path / "out/.scaled.tmp-killed"
    leftover.mkdir()
    (leftover / ".tilec-build-in-progress").write_text("")
    again = build(tmp_path)
    assert "up to date" in again.stdout and "libcst" in loaded(again)
    assert not leftover.exists()


def test_a_build_that_printed_a_diagnostic_prints_it_again(tmp_path):
    """A warning is not stored: the next build compiles again and repeats it."""
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM.format(factor="2.0") + "\n\n@wp.kernel\ndef broken(A: wp.array(dtype=float)):\n"
                   "    i = wp.tid()\n    A[i] = wp.tile_sum(wp.tile_load(A, shape=4, offset=i))[0]\n")
    first = build(tmp_path)
    if not first.stderr.strip():
        pytest.skip("this program prints no diagnostic any more")
    again = build(tmp_path)
    assert again.stderr == first.stderr and "libcst" in loaded(again)


@pytest.mark.parametrize("shortcut", [True, False], ids=["shortcut", "full-path"])
def test_an_edited_manifest_is_never_up_to_date(tmp_path, shortcut):
    """The manifest is among the hashed artefacts (its own `manifest_sha256`): an argument's dtype
    edited in it would let the loader pass float64 arrays to float32 code, so the build rewrites it.
    The full path (-v records no stamp) decides the same as the shortcut."""
    extra = () if shortcut else ("-v",)
    build(tmp_path, *extra)
    manifest = tmp_path / "out/scaled/manifest.json"
    built = manifest.read_text()
    assert json.loads(built)["manifest_sha256"]
    edited = built.replace('"float32"', '"float64"')
    assert edited != built
    manifest.write_text(edited)
    again = build(tmp_path, *extra)
    assert "scaled: built" in again.stdout, again.stdout + again.stderr
    assert manifest.read_text() == built
    assert "up to date" in build(tmp_path, *extra).stdout
    manifest.write_text(built.replace("\n", "\n ", 1))  # spacing only: still not what the build wrote
    assert "scaled: built" in build(tmp_path, *extra).stdout
    assert manifest.read_text() == built


def run_module(tmp_path, *args):
    """`python -X importtime -m tilec ARGS`: (stdout, the modules it imported)."""
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tilec", *args], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc.stdout, imported


@pytest.mark.parametrize("spelling", [("-o", "{out}"), ("--outdir={out}", "--block-dim=64", "--color", "never")],
                         ids=["short", "long"])
def test_python_m_tilec_answers_an_unchanged_build_before_loading_the_command_line(tmp_path, spelling):
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM.format(factor="2.0"))
    args = ["build", str(src), "--target", "cpu", *(s.format(out=tmp_path / "out") for s in spelling)]
    first, imported = run_module(tmp_path, *args)
    assert "scaled: built" in first and "click" in imported
    again, imported = run_module(tmp_path, *args)
    assert again == f"scaled: up to date in {tmp_path / 'out' / 'scaled'}\n"
    assert "click" not in imported and "tilec.cli" not in imported
    (tmp_path / "out/scaled/scaled.cpp").write_text("// edited\n")
    repaired, imported = run_module(tmp_path, *args)
    assert "scaled: built" in repaired and "click" in imported
    checked, imported = run_module(tmp_path, *args, "--check")  # an option the shortcut leaves to click
    assert "up to date" in checked and "click" in imported


def test_the_shortcut_reads_options_with_the_command_lines_defaults():
    from tilec import cli, uptodate

    # the values click passes for a bare `build p.py` (a flag's declared default is a sentinel in
    # some click versions, so ask click what it resolves, not the parameter objects)
    given = cli.build.make_context("build", ["p.py"]).params
    assert {k: given[k] for k in uptodate.DEFAULTS} == uptodate.DEFAULTS
    spelled = {opt for p in cli.build.params for opt in p.opts}
    assert set(uptodate.VALUED) | set(uptodate.FLAGS) <= spelled
    read = uptodate.read_build_argv
    assert read(["build", "p.py"]) == ("p.py", "build", uptodate.DEFAULTS)
    file, outdir, options = read(["build", "--target", "cpu", "p.py", "--outdir=o", "--block-dim", "64", "--debug"])
    assert (file, outdir) == ("p.py", "o") and options == {**uptodate.DEFAULTS, "target": "cpu", "block_dim": 64,
                                                           "debug": True}
    for refused in (["check", "p.py"], ["build"], ["build", "p.py", "-v"], ["build", "p.py", "--check"],
                    ["build", "p.py", "q.py"], ["build", "p.py", "--block-dim", "0"], ["build", "p.py", "--target", "x"],
                    ["build", "p.py", "-o"], ["build", "p.py", "--debug=1"], ["build", "p.py", "--cxx", "g++"],
                    ["build", "p.py", "--help"], ["build", "--", "p.py"], ["build", "p.py", "--max-shared", "-1"]):
        assert read(refused) is None, refused
