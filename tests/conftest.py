"""Shared fixtures: options for blessing snapshots, and building programs to load and run; which
tilec is under test; the allowance of skipped tests (a skip must have a reason that cannot be a
regression, and no more of them than tests/skip_allowance.json says)."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
SKIP_ALLOWANCE = ROOT / "tests" / "skip_allowance.json"
# One compiler process per build (backend_cpu/compiler.py compile_jobs): the suite already runs a
# worker per core, and its builds stay the same whatever the load when it starts.
os.environ.setdefault("TILEC_JOBS", "1")


def _tilec_under_test() -> Path:
    import tilec

    return Path(tilec.__file__).resolve().parent


def pytest_report_header(config):
    where = _tilec_under_test()
    kind = "the checkout" if ROOT in where.parents else "an installed package"
    import sampling

    return [f"tilec under test: {where} ({kind})", sampling.describe()]


def pytest_configure(config):
    if os.environ.get("TILEC_EMU_ON_GPU"):
        import harness
        import on_gpu

        on_gpu.install(harness)
    if os.environ.get("TILEC_EXPECT_INSTALLED") == "1" and ROOT in _tilec_under_test().parents:
        pytest.exit(f"TILEC_EXPECT_INSTALLED=1 but tilec is imported from the checkout ({_tilec_under_test()}); "
                    "run with PYTHONSAFEPATH=1 from an environment where the wheel is installed", returncode=3)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    fuzz = sys.modules.get("test_fuzz")
    if fuzz is not None and any(fuzz.STATS.values()):
        terminalreporter.write_line(f"fuzz: {fuzz.STATS}")
    for line in getattr(config, "_skips_over_allowance", []):
        terminalreporter.write_line(f"skip allowance exceeded: {line}", red=True)


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: the controller sees every report and judges the skips
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    over = _skips_over_allowance(reporter.stats.get("skipped", []) if reporter else [])
    session.config._skips_over_allowance = over
    if over and exitstatus == 0:
        session.exitstatus = 1


def _skips_over_allowance(reports) -> list:
    """Skips whose reason is not allowed, or allowed reasons seen more often than allowed."""
    allowance = json.loads(SKIP_ALLOWANCE.read_text())
    counts: dict = {}
    unexpected = []
    for report in reports:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        key = next((k for k in allowance if k in reason), None)
        if key is None:
            unexpected.append(f"{report.nodeid}: {reason}")
        else:
            counts[key] = counts.get(key, 0) + 1
    return unexpected + [f"{n} skips for {k!r} (allowed: {allowance[k]})" for k, n in counts.items()
                         if n > allowance[k]]


def pytest_addoption(parser):
    parser.addoption("--bless", action="store_true", help="rewrite tests/ui/*.stderr snapshots")
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/")
    parser.addoption("--fuzz-long", action="store_true", help="run the long fuzzing campaign")


@pytest.fixture(scope="session", autouse=True)
def _build_cache(tmp_path_factory, request):
    """Programs built by harness.build live in this session's temporary folder, keyed by source,
    block_dim, target and the compiler's path and version; pytest-xdist workers share it (a build
    is locked, so a worker finding another's build up to date reuses it)."""
    import harness

    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        root = root.parent  # the session's folder, above each worker's own
    harness.CACHE = root / "builds"
    harness.CACHE.mkdir(exist_ok=True)


@pytest.fixture(scope="session")
def bless(request):
    return request.config.getoption("--bless")


@pytest.fixture(scope="session")
def update_golden(request):
    return request.config.getoption("--update-golden")


def has_cxx() -> bool:
    return shutil.which("clang++") is not None or shutil.which("g++") is not None


needs_cxx = pytest.mark.skipif(not has_cxx(), reason="needs a C++ compiler")
# the C++ compilers installed, for tests that check each (tilec picks clang++ where both are)
INSTALLED_CXX = [c for c in ("g++", "clang++") if shutil.which(c)] or ["g++"]
