"""Hostile-input fuzzing: hypothesis strategies that mutate valid programs (token edits, random
bytes, deep nesting, huge numbers, hostile names) and the oracle that runs `tilec check` in process
the way the command line does, classifying each outcome. A traceback or a hang is a failure; a
diagnostic, a refused file or an accepted program is fine. Shared by test_fuzz_hostile.py (CI) and
bench/fuzz_hostile.py (the long run)."""
from __future__ import annotations

import signal
import sys
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from tilec.diagnostics import CompileError
from tilec.frontend.source import SourceError, read_source
from tilec.pipeline import compile_source

ROOT = Path(__file__).resolve().parents[2]
CORPUS = [p.read_text() for p in sorted((ROOT / "tests/valid").glob("*.py")) + sorted((ROOT / "samples").glob("*.py"))]
WORDS = ["NULL", "M_PI", "errno", "decltype", "wchar_t", "np", "Kernel", "_grid", "adj_x", "größe", "__class__",
         "TL_HD", "main", "f_1", "int", "float", "wp", "return", "range", "tile_load", "i", "j", "x"]
NUMBERS = ["0", "-1", "1 << 70", "2**32 + 3", "3000000000", "0xFFFF ** 0xFFFFFFF", "1 << 10**10", "1.5",
           "1e309", "-2147483648", "(1 << 30,)", "(0, 0)", "10**4000", "float('nan')"]
JUNK = ["\x00", "\ufeff", "\u2028", "\x0c", "\r", "\\", "'''", '"', "{", "}", "#", ":", "(", ")", "\t", "é", "\udcff"]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def check_in_process(data: bytes, timeout_s: float = 30.0) -> str:
    """`tilec check` on a file holding `data`, in this process: 'ok', 'diagnostic', 'refused',
    'too-deep'; raises on a traceback (any other exception) and Hang past timeout_s."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.py"
        path.write_bytes(data)
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            try:
                source = read_source(str(path))
            except SourceError:
                return "refused"
            compile_source(source, str(path))
            return "ok"
        except CompileError:
            return "diagnostic"
        except RecursionError:
            return "too-deep"  # the command line reports TC0113 (tilec/limits.py)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _mutate(draw, text: str) -> str:
    lines = text.split("\n")
    kind = draw(st.sampled_from(["delete", "duplicate", "swap", "word", "number", "junk", "nest", "truncate",
                                 "indent"]))
    k = draw(st.integers(0, max(len(lines) - 1, 0)))
    line = lines[k] if lines else ""
    if kind == "delete" and lines:
        del lines[k]
    elif kind == "duplicate":
        lines.insert(k, line)
    elif kind == "swap" and len(lines) > 1:
        j = draw(st.integers(0, len(lines) - 1))
        lines[k], lines[j] = lines[j], lines[k]
    elif kind in ("word", "number", "junk") and line:
        pos = draw(st.integers(0, len(line)))
        pool = {"word": WORDS, "number": NUMBERS, "junk": JUNK}[kind]
        cut = draw(st.integers(0, 6))
        lines[k] = line[:pos] + draw(st.sampled_from(pool)) + line[pos + cut:]
    elif kind == "nest" and "=" in line:
        depth = draw(st.sampled_from([10, 150, 400, 1000]))
        head, _, tail = line.partition("=")
        op = draw(st.sampled_from(["-", "+ 0 +", "wp.abs("]))
        lines[k] = (f"{head}= {'wp.abs(' * depth}{tail}{')' * depth}" if op == "wp.abs(" else
                    f"{head}= " + " ".join([tail] + [op.strip() + " " + tail] * depth) if op != "-" else
                    f"{head}= {'-' * depth}{tail}")
    elif kind == "truncate":
        return "\n".join(lines)[: draw(st.integers(0, len(text)))]
    elif kind == "indent" and line:
        lines[k] = draw(st.sampled_from(["", " ", "\t", "        "])) + line
    return "\n".join(lines)


@st.composite
def hostile_programs(draw) -> bytes:
    """A valid program with 1 to 3 mutations, or random bytes, or valid text with random bytes."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.binary(max_size=512))
    text = draw(st.sampled_from(CORPUS))
    for _ in range(draw(st.integers(1, 3))):
        text = _mutate(draw, text)
    data = text.encode("utf-8", "surrogatepass")
    if choice == 1:
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(min_size=1, max_size=16)) + data[pos:]
    return data


def prepare() -> None:
    """The recursion budget the command line gives its compile thread, within this thread's stack."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 6000))
