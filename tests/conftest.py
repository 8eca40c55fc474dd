"""Shared fixtures: options for blessing snapshots, and building programs to load and run."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def pytest_addoption(parser):
    parser.addoption("--bless", action="store_true", help="rewrite tests/ui/*.stderr snapshots")
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/")
    parser.addoption("--fuzz-long", action="store_true", help="run the long fuzzing campaign")


@pytest.fixture(scope="session")
def bless(request):
    return request.config.getoption("--bless")


@pytest.fixture(scope="session")
def update_golden(request):
    return request.config.getoption("--update-golden")


def has_cxx() -> bool:
    return shutil.which("clang++") is not None or shutil.which("g++") is not None


needs_cxx = pytest.mark.skipif(not has_cxx(), reason="needs a C++ compiler")
