"""A module's generated C++ split into translation units that the compiler builds in parallel.

Contract: `split(text, parts)` takes `<module>.cpp` as templates/module.cpp.j2 writes it (includes,
an anonymous namespace of static functions and kernel bodies, then one `extern "C" int` entry per
kernel direction) and returns at most `parts` sources, or None when there is nothing to split
(fewer than two entries) or the text is not laid out that way. Every source is the file's text up
to its first entry, followed by some of the entries in the file's order; every entry is in exactly
one source. A static function no entry of a source calls is unreferenced there, and the compiler
drops it before optimising: each kernel body is optimised, with the same inlining, in the source
whose entry launches it, as it is in the whole file. The objects are linked into the one library.

Why: g++ spends most of a module's build optimising its kernels (bench/README.md, "Compile speed
of the command line"); a forward and its adjoint compiled side by side take the wall time of the
larger one. The price is the shared part compiled twice (the precompiled header's load, template
instantiation): more CPU in all, so the driver splits only onto idle cores (compiler.compile_jobs).
"""
from __future__ import annotations

import re

ENTRY = re.compile(r'^extern "C" int \w+\(', re.MULTILINE)
LAUNCHED = re.compile(r"\[&\]\(tl::Ctx& ctx\) \{ (\w+)\(ctx")


def split(text: str, parts: int) -> list[str] | None:
    starts = [m.start() for m in ENTRY.finditer(text)]
    if parts < 2 or len(starts) < 2:
        return None
    shared = text[:starts[0]]
    entries = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    if any(not _one_definition(e) for e in entries):
        return None
    groups = _balanced([_weight(shared, e) for e in entries], min(parts, len(entries)))
    return [shared + "".join(entries[i] for i in group) for group in groups]


def _one_definition(entry: str) -> bool:
    """The entry is one function definition and nothing else: its only line `}` closes it."""
    lines = entry.rstrip("\n").split("\n")
    return lines[-1] == "}" and lines.count("}") == 1


def _weight(shared: str, entry: str) -> int:
    """Roughly what compiling the entry costs: the length of the kernel body it launches."""
    found = LAUNCHED.search(entry)
    start = shared.find(f"static void {found.group(1)}(") if found else -1
    if start < 0:
        return len(entry)
    end = shared.find("\n}\n", start)
    return (end if end >= 0 else len(shared)) - start + len(entry)


def _balanced(weights: list[int], parts: int) -> list[list[int]]:
    """Entry indices in `parts` groups of about equal weight (heaviest first onto the lightest
    group), each group in file order, groups ordered by their first entry."""
    groups: list[list[int]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for i in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        lightest = min(range(parts), key=lambda g: (loads[g], g))
        groups[lightest].append(i)
        loads[lightest] += weights[i]
    return sorted((sorted(g) for g in groups if g), key=lambda g: g[0])
