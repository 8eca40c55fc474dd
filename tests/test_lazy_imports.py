"""Start-up cost: the CLI imports the frontend (libcst, the op table, numpy) only to compile."""
import subprocess
import sys

from tilec import cli, pipeline


def test_cli_passes_match_the_pipeline():
    assert cli.PASSES == pipeline.PASSES


def test_version_and_cli_import_leave_libcst_unloaded():
    code = ("import sys; from click.testing import CliRunner; import tilec.cli as c; "
            "r = CliRunner().invoke(c.main, ['--version']); "
            "print(r.exit_code, r.output.strip(), sorted(m for m in ('libcst', 'numpy', 'tilec.pipeline') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out[0] == "0" and "0.1.0" in out
    assert out[-1] == "[]", out
