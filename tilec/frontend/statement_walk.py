"""The statements of a function body, nested blocks included, without libcst's per-node walk."""
from __future__ import annotations

from collections.abc import Iterator

import libcst as cst


def statements(body: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """Every statement of a body, small and compound, nested blocks included, nested defs and classes
    excluded (their own scopes). Statement by statement: libcst's `children` of every node made
    scans of a long kernel cost a thousand calls per line."""
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            stack.extend(reversed(node.body))
        elif isinstance(node, cst.SimpleStatementLine):
            yield from node.body
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(node, cst.Match):  # `match x:` (host code): each case's block
            yield node
            stack.extend(reversed([case.body for case in node.cases]))
        elif isinstance(node, cst.BaseCompoundStatement):
            yield node
            blocks: list[cst.CSTNode] = [node.body]
            orelse = getattr(node, "orelse", None)
            if isinstance(orelse, (cst.If, cst.Else)):
                blocks.append(orelse if isinstance(orelse, cst.If) else orelse.body)
            for handler in getattr(node, "handlers", ()):
                blocks.append(handler.body)
            final = getattr(node, "finalbody", None)
            if final is not None:
                blocks.append(final.body)
            stack.extend(reversed(blocks))
        else:
            yield node


def subnodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node under it, by an explicit stack (no visitor's per-node calls)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def single_name_assign(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """`NAME = value` alone on its line (a class's or a factory's constant), as (NAME, value)."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value, small.value
    return None


def names_in(node: cst.CSTNode) -> set[str]:
    """Every simple name an expression mentions (an attribute's name too: a superset of the variables
    it reads)."""
    out: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.add(n.value)

    node.visit(_Names())
    return out
