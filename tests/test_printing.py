"""print() of string literals and wp.printf in kernels (frontend/printing.py): the text each
device writes, against Warp 1.19's output for the same program on the CPU, and never in the adjoint."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, import_under_warp

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def report(x: wp.array(dtype=float), n: wp.array(dtype=wp.int64), flag: bool, out: wp.array(dtype=float)):
    i = wp.tid()
    print("begin: 100% " "joined")
    wp.printf("i=%d x=%f x2=%8.3e|%-6.2f|%g\\n", i, x[i], x[i] * 2.0, x[i], wp.float64(x[i]) / wp.float64(3.0))
    wp.printf("n=%lld hex=%llx oct=%llo %s! %%\\n", n[i], n[i], n[i], "done")
    wp.printf("flag=%d small=%u\\n", flag, wp.uint8(200))
    wp.print("end")
    out[i] = x[i] * x[i]
'''
ARGS = ([1.5], [255], True)


def _inputs():
    x, n, flag = ARGS
    return [np.array(x, np.float32), np.array(n, np.int64), flag, np.zeros(1, np.float32)]


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_strings_and_printf_print_what_warp_prints(device, capfd, tmp_path, monkeypatch):
    wp, prog = import_under_warp(SOURCE, "printing_prog", tmp_path, monkeypatch)
    args = _inputs()
    capfd.readouterr()
    wp.launch(prog.report, dim=1, inputs=[wp.array(a, device="cpu") if isinstance(a, np.ndarray) else a
                                          for a in args], device="cpu")
    wp.synchronize()
    want = "".join(line for line in capfd.readouterr().out.splitlines(keepends=True)
                   if not line.startswith("Module printing_prog "))  # Warp's own note that it compiled
    assert want.startswith("begin: 100% joined\ni=0 x=1.500000")  # what Warp printed: the test reads it
    m = build(SOURCE, "printing_prog", target=device)
    m.report.launch(dim=1, inputs=_inputs(), device=device)
    assert capfd.readouterr().out == want


def test_nothing_is_printed_by_the_adjoint(capfd):
    m = build(SOURCE, "printing_prog")
    args = _inputs()
    m.report.launch(dim=1, inputs=args)
    assert capfd.readouterr().out.count("\n") == 5
    m.report.launch(dim=1, inputs=args, adj_inputs=[np.zeros(1, np.float32), None, False, np.ones(1, np.float32)],
                    adjoint=True)
    assert capfd.readouterr().out == ""
