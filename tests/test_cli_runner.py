"""Every flag of the command line (DESIGN §3 and the additions README lists), through click's CliRunner.

Compilers are stand-in scripts that record their arguments and write their output file, so the
tests show which compiler ran with which flags without waiting for one; one test runs g++ for real.
"""
from __future__ import annotations

import json
import os
import shutil
import stat

import pytest
from click.testing import CliRunner

from conftest import ROOT
from tilec import __version__
from tilec.cli import main

GEMM = str(ROOT / "samples/gemm.py")
BAD = """import warp as wp


@wp.kernel
def bad(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(4, 8))
    b = wp.tile_load(A, shape=(4, 4))
    c = wp.tile_matmul(a, b)
    d = a + b
"""


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def fake_compiler(tmp_path, name: str):
    """A script that logs its argv to <name>.log and creates the file after -o."""
    log = tmp_path / f"{name}.log"
    script = tmp_path / name
    script.write_text(f"""#!/bin/sh
echo "$@" >> {log}
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 99.9, V99.9.9"; exit 0; fi
out=""; prev=""
for a in "$@"; do if [ "$prev" = "-o" ]; then out="$a"; fi; prev="$a"; done
[ -n "$out" ] && : > "$out"
exit 0
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


@pytest.fixture
def bad_file(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    return path


# ------------------------------------------------------------------ tilec, check


def test_version_and_help():
    assert run("--version").output.strip() == f"tilec, version {__version__}"
    for command in ("check", "build", "emit"):
        result = run(command, "--help")
        assert result.exit_code == 0 and "Usage:" in result.output


def test_check_reports_every_error_with_exit_1(bad_file):
    result = run("check", bad_file)
    assert result.exit_code == 1
    assert result.stderr.count("error[") == 2 and result.stderr.rstrip().endswith("2 errors found")
    assert "\x1b[" not in result.stderr  # auto: not a terminal, no colour


def test_color_always_and_never(bad_file):
    coloured = run("check", bad_file, "--color", "always")
    assert coloured.exit_code == 1
    assert "\x1b[31m" in coloured.stderr and "\x1b[1m" in coloured.stderr  # red severity, bold message
    plain = run("check", bad_file, "--color", "never")
    assert "\x1b[" not in plain.stderr
    assert click_unstyle(coloured.stderr) == plain.stderr
    assert run("check", bad_file, "--color", "sometimes").exit_code == 2  # click's usage error


def click_unstyle(text):
    import click

    return click.unstyle(text)


def test_check_format_json(bad_file):
    result = run("check", bad_file, "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["file"] == str(bad_file) and data["errors"] == 2 and data["warnings"] == 0
    first = data["diagnostics"][0]
    assert (first["code"], first["slug"], first["severity"]) == ("TC0102", "matmul-shape", "error")
    assert (first["line"], first["column"]) == (8, 9)
    assert "inner dimensions" in first["message"]
    assert run("check", GEMM, "--format", "json").exit_code == 0
    assert json.loads(run("check", GEMM, "--format", "json").stdout)["diagnostics"] == []


def test_check_format_sarif(bad_file):
    result = run("check", bad_file, "--format", "sarif")
    assert result.exit_code == 1
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0"
    run0 = sarif["runs"][0]
    assert run0["tool"]["driver"]["name"] == "tilec"
    rules = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    assert rules == sorted(set(rules)) and "TC0102" in rules
    res = run0["results"][0]
    assert res["ruleId"] == "TC0102" and res["level"] == "error" and rules[res["ruleIndex"]] == "TC0102"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (8, 9)
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(bad_file)


def test_check_format_json_of_a_syntax_error_and_no_kernels(tmp_path):
    (tmp_path / "s.py").write_text("def f(:\n")
    data = json.loads(run("check", tmp_path / "s.py", "--format", "json").stdout)
    assert [d["code"] for d in data["diagnostics"]] == ["TC0001"]
    (tmp_path / "e.py").write_text("")
    result = run("check", tmp_path / "e.py", "--format", "sarif")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["runs"][0]["results"][0]["level"] == "warning"


def test_check_show_types_dump_after_block_dim_max_shared_verbose():
    out = run("check", GEMM, "--show-types", "--block-dim", "128")
    assert out.exit_code == 0 and "kernel gemm" in out.stdout
    assert "kernel gemm(" in run("check", GEMM, "--dump-after", "check").stdout
    assert "api aliases" in run("check", GEMM, "--dump-after", "resolve").stdout
    assert "@wp.kernel" in run("check", GEMM, "--dump-after", "parse").stdout
    budget = str(ROOT / "tests/ui/shared_budget.py")
    assert "TC0109" in run("check", budget).stderr
    roomy = run("check", budget, "--max-shared", str(1024 * 1024))  # the budget named is the flag's
    assert roomy.exit_code == 1 and "tiles that do not fit the 1024 KiB budget (--max-shared)" in roomy.stderr
    verbose = run("check", GEMM, "-v")
    assert verbose.exit_code == 0 and verbose.stderr.startswith(f"check {GEMM}: ") and " s\n" in verbose.stderr


# ------------------------------------------------------------------ emit


@pytest.mark.parametrize("target, needle", [("cpu", "gemm_cpu_forward("), ("cuda", "__global__"),
                                            ("header", "#ifndef TILEC_GEMM_H"), ("loader", "tilec-rt/loader.py"),
                                            ("manifest", '"kernels"')])
def test_emit_targets(target, needle):
    result = run("emit", GEMM, "--target", target)
    assert result.exit_code == 0 and needle in result.stdout and result.stderr == ""


def test_emit_block_dim_changes_the_code():
    assert "Tile<float, 32, 32>, 128>" in run("emit", GEMM, "--target", "cuda", "--block-dim", "128").stdout


# ------------------------------------------------------------------ build


def test_build_emit_only_writes_sources_and_nothing_compiled(tmp_path):
    result = run("build", GEMM, "-o", tmp_path, "--emit-only")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "gemm"
    assert {"gemm.cpp", "gemm.cu", "gemm.h", "manifest.json", "__init__.py"} <= set(os.listdir(folder))
    assert not list(folder.glob("*.so")) and not list(folder.glob("*.fatbin"))


def test_explicit_cxx_is_used_with_the_debug_flags(tmp_path):
    cxx, log = fake_compiler(tmp_path, "my-cxx")
    result = run("build", GEMM, "-o", tmp_path / "out", "--target", "cpu", "--cxx", cxx, "--debug")
    assert result.exit_code == 0, result.output
    compile_line = [line for line in log.read_text().splitlines() if line.endswith("gemm.cpp")]
    assert len(compile_line) == 1, log.read_text()  # other calls ask the compiler its version and macros
    args = compile_line[0].split()
    assert "-O0" in args and "-g" in args and "-O3" not in args
    assert (tmp_path / "out/gemm/libgemm_cpu.so").exists()
    assert json.loads((tmp_path / "out/gemm/manifest.json").read_text())["flags"]["debug"] is True


def test_explicit_nvcc_is_used_for_each_arch(tmp_path):
    nvcc, log = fake_compiler(tmp_path, "my-nvcc")
    result = run("build", GEMM, "-o", tmp_path / "out", "--target", "cuda", "--nvcc", nvcc, "--arch", "sm_75,sm_86")
    assert result.exit_code == 0, result.output
    text = log.read_text()
    assert "arch=compute_75,code=sm_75" in text and "arch=compute_86,code=sm_86" in text
    assert (tmp_path / "out/gemm/gemm.fatbin").exists()
    manifest = json.loads((tmp_path / "out/gemm/manifest.json").read_text())
    assert manifest["cuda_build"]["archs"] == ["sm_75", "sm_86"]


@pytest.mark.parametrize("option", ["--cxx", "--nvcc"])
def test_a_missing_explicit_compiler_fails_naming_the_path(tmp_path, option):
    result = run("build", GEMM, "-o", tmp_path, "--target", "cpu" if option == "--cxx" else "cuda", option,
                 "/no/such/compiler")
    assert result.exit_code == 1
    assert result.stderr == f"error: {option} /no/such/compiler: not found or not executable\n"
    assert not (tmp_path / "gemm").exists()


def test_target_cuda_emu_builds_the_emulation_library(tmp_path):
    cxx, log = fake_compiler(tmp_path, "cxx")
    assert run("build", GEMM, "-o", tmp_path / "out", "--target", "cuda-emu", "--cxx", cxx).exit_code == 0
    assert "-DTILEC_CUDA_EMU" in log.read_text() and (tmp_path / "out/gemm/libgemm_cuda_emu.so").exists()


def test_verbose_prints_each_step_with_its_time(tmp_path):
    cxx, _ = fake_compiler(tmp_path, "cxx")
    result = run("build", GEMM, "-o", tmp_path / "out", "--target", "cpu", "--cxx", cxx, "-v")
    assert result.exit_code == 0, result.output
    steps = [line.rsplit(": ", 1) for line in result.stderr.splitlines()]
    assert [s[0] for s in steps] == [f"check {GEMM}", "generate sources", "cxx -> libgemm_cpu.so", "total"]
    assert all(s[1].endswith(" s") and float(s[1][:-2]) >= 0 for s in steps)
    assert f"{cxx} -std=c++17" in result.stdout  # the command itself


def test_line_directives(tmp_path):
    run("build", GEMM, "-o", tmp_path, "--emit-only", "--line-directives")
    assert '#line 21 "gemm.py"' in (tmp_path / "gemm/gemm.cpp").read_text()


def test_build_errors_exit_1_and_write_nothing(tmp_path, bad_file):
    result = run("build", bad_file, "-o", tmp_path / "out", "--emit-only", "--color", "never")
    assert result.exit_code == 1 and "error[TC0102]" in result.stderr
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ build --check


def test_check_of_a_missing_folder_is_one_short_message(tmp_path):
    result = run("build", GEMM, "-o", tmp_path / "none", "--check")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (f"gemm: {tmp_path / 'none/gemm'} does not exist; build it with "
                             f"`tilec build {GEMM} -o {tmp_path / 'none'}`\n")


def test_emit_only_output_checks_as_current_with_a_plain_check(tmp_path):
    assert run("build", GEMM, "-o", tmp_path, "--emit-only", "--target", "cpu").exit_code == 0
    result = run("build", GEMM, "-o", tmp_path, "--check")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"gemm: generated code in {tmp_path} is up to date\n"


def test_stale_check_summarises_and_prints_the_recorded_rebuild_command(tmp_path):
    assert run("build", GEMM, "-o", tmp_path, "--emit-only", "--block-dim", "128", "--target", "cpu").exit_code == 0
    folder = tmp_path / "gemm"
    (folder / "notes.txt").write_text("mine\n")
    (folder / "gemm.h").unlink()
    result = run("build", GEMM, "-o", tmp_path, "--check")  # default block_dim: the code differs
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "1 missing: gemm.h"
    assert lines[1] == "2 changed: gemm.cu, manifest.json"
    assert lines[2] == "1 extra: notes.txt"
    assert lines[-1].startswith("... ") and lines[-1].endswith(" more diff lines (--diff shows all)")
    assert len(lines) == 3 + 40 + 1
    assert result.stderr == (f"gemm: generated code in {folder} is stale; rebuild with `tilec build {GEMM} -o "
                             f"{tmp_path} --target cpu --block-dim 128 --emit-only`\n")
    full = run("build", GEMM, "-o", tmp_path, "--check", "--diff")
    assert full.exit_code == 1 and len(full.stdout.splitlines()) > 200 and "more diff lines" not in full.stdout
    current = run("build", GEMM, "-o", tmp_path, "--check", "--block-dim", "128")
    assert current.exit_code == 1 and current.stdout.splitlines()[:2] == ["1 missing: gemm.h", "1 extra: notes.txt"]


@pytest.mark.build
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_real_cpu_build_then_noop_rebuild(tmp_path):
    first = run("build", GEMM, "-o", tmp_path, "--target", "cpu", "--cxx", "g++", "--debug")
    assert first.exit_code == 0, first.output
    assert first.stdout == f"gemm: built in {tmp_path / 'gemm'}\n"
    again = run("build", GEMM, "-o", tmp_path, "--target", "cpu", "--cxx", "g++", "--debug")
    assert again.stdout == f"gemm: up to date in {tmp_path / 'gemm'}\n"
    assert run("build", GEMM, "-o", tmp_path, "--check").exit_code == 0


def test_progress_indicator_only_on_a_terminal():
    from tilec.console import Progress

    printed = []
    progress = Progress(False, lambda text, **kw: printed.append(text), tty=True, total=2)
    for label in ("check", "g++ -> libgemm_cpu.so"):
        with progress.step(label):
            pass
    progress.close()
    assert printed == ["\r[1/2] check\x1b[K", "\r[2/2] g++ -> libgemm_cpu.so\x1b[K", "\r\x1b[K"]
    quiet = []
    progress = Progress(False, lambda text, **kw: quiet.append(text), tty=False, total=2)
    with progress.step("check"):
        pass
    progress.close()
    assert quiet == []


@pytest.mark.parametrize("command", [("build", "--emit-only", "--target", "all"), ("build", "--emit-only", "--target", "cuda"),
                                     ("build", "--check", "--target", "all"), ("emit", "--target", "cuda")])
def test_each_kernel_adjoint_is_derived_once_per_command(tmp_path, monkeypatch, command):
    """The shared-memory check of a CUDA build needs the kernels' adjoints, and so does the
    generation: one derivation serves both (deriving is most of a long kernel's compile)."""
    from tilec.codegen import sources

    derived: list[str] = []

    def counting(real):
        def derivation(kernel, *args, **kwargs):
            derived.append(kernel.name)
            return real(kernel, *args, **kwargs)
        return derivation

    # a SIMT kernel's adjoint comes from adjoint_kernel, a tile kernel's from derive
    monkeypatch.setattr(sources, "adjoint_kernel", counting(sources.adjoint_kernel))
    monkeypatch.setattr(sources, "derive", counting(sources.derive))
    out = ("-o", tmp_path / "out") if command[0] == "build" else ()
    result = run(*command, GEMM, *out)
    assert result.exit_code == (1 if "--check" in command else 0), result.output  # --check: nothing built yet
    assert derived and sorted(derived) == sorted(set(derived)), derived
