"""The values a function's locals may hold, path by path: what a kernel nested in the function
sees of them (frontend/nested.py).

A test function or kernel factory binds the constants its kernels use with plain assignments,
often on both sides of an `if` (`if device.is_cpu: THREADS = 1 else: THREADS = 32`). Python
reads a closure's variables when the kernel is built, so a kernel may see the value of any path
through the function's `if`/`elif`/`else` statements. `local_envs` runs the function's body
over a list of envs, one per path: an assignment evaluates its right-hand side in each env; an
`if` forks the list (its test is not evaluated: every branch is possible, one without `else`
also falls through). A name bound any other way -- in a loop, `try`, `with ... as`, tuple
unpacking, augmented assignment, `del`, an import or a def -- is Unknown in every env.

Never runs user code; values come only from the `evaluate` callback (constants and dtypes).
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from . import consts

Env = dict[str, object]
Evaluate = Callable[[cst.BaseExpression, Env], object]  # a value, or consts.NOT_CONST
MakeUnknown = Callable[[str], object]  # an Unknown binding whose reason completes "… because <why>"


def local_envs(fn: cst.FunctionDef, env: Env, wanted: set[str], evaluate: Evaluate, unknown: MakeUnknown,
               limit: int, code: Callable[[cst.CSTNode], str], keys: StateKeys | None = None,
               evaluate_list: Evaluate | None = None) -> list[Env]:
    """One env per distinct path's values of `wanted` (the names of `env` kept as given, unless
    the body rebinds them), at most `limit`. A wanted name bound on no path, or only in ways
    tilec does not follow, is Unknown; a path on which a wanted name is unbound is dropped
    when another path binds it (that path raises NameError in Python, and launches nothing)."""
    name = fn.name.value
    runner = _Runner(evaluate, unknown, limit, code, name, keys, evaluate_list, read_only(fn) if evaluate_list else set())
    states = runner.block(_body(fn.body), [dict(env)])
    somewhere = {n for s in states for n in s}
    out: list[Env] = []
    for state in states:
        if any(n in somewhere and n not in state for n in wanted):
            continue  # unbound on this path, bound on another: this path raises NameError
        kept = {k: v for k, v in state.items() if k in wanted or k in env}
        for n in wanted - set(kept):
            kept[n] = unknown(f"`{n}` is bound in `{name}` in a way tilec cannot evaluate")
        out.append(kept)
    return runner.keys.dedupe(out)[:limit]


def block_envs(stmts: list[cst.CSTNode], env: Env, evaluate: Evaluate, unknown: MakeUnknown, limit: int,
               code: Callable[[cst.CSTNode], str], owner: str) -> list[Env]:
    """`env` after the statements of a loop body, one env per path (a call inside the body sees the
    values assigned before it in the same iteration; later ones are not told apart)."""
    runner = _Runner(evaluate, unknown, limit, code, owner)
    return runner.keys.dedupe(runner.block(stmts, [dict(env)]))[:limit]


class _Runner:
    def __init__(self, evaluate: Evaluate, unknown: MakeUnknown, limit: int,
                 code: Callable[[cst.CSTNode], str], name: str, keys: StateKeys | None = None,
                 evaluate_list: Evaluate | None = None, lists: set[str] | frozenset[str] = frozenset()) -> None:
        self.evaluate, self.unknown, self.limit, self.code, self.name = evaluate, unknown, limit, code, name
        self.keys = keys or StateKeys()
        self.evaluate_list = evaluate_list or evaluate
        self.lists = lists  # locals a list may be bound to (read_only), evaluated by evaluate_list

    def block(self, stmts: list[cst.CSTNode], states: list[Env]) -> list[Env]:
        for stmt in stmts:
            states = self.stmt(stmt, states)
        return states

    def stmt(self, stmt: cst.CSTNode, states: list[Env]) -> list[Env]:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                states = self.small(small, states)
            return states
        if isinstance(stmt, cst.If):
            out: list[Env] = []
            branch: cst.If = stmt
            while True:
                out += self.block(_body(branch.body), [dict(s) for s in states])
                orelse = branch.orelse
                if orelse is None:
                    out += states  # no else: the test may be false
                    break
                if isinstance(orelse, cst.If):
                    branch = orelse
                    continue
                out += self.block(_body(orelse.body), [dict(s) for s in states])
                break
            return self.keys.dedupe(out)[:self.limit]
        if isinstance(stmt, cst.With):  # its body runs once; `as` targets are not followed
            return self.block(_body(stmt.body), self.opaque(set().union(*(
                _bound_names(item) for item in stmt.items)), states))
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return self.opaque({stmt.name.value}, states)
        return self.opaque(_bound_names(stmt), states)  # loops, try, with, match: not followed

    def small(self, small: cst.CSTNode, states: list[Env]) -> list[Env]:
        target: cst.BaseExpression | None = None
        value: cst.BaseExpression | None = None
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target, value = small.targets[0].target, small.value
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            target, value = small.target, small.value
        if isinstance(target, cst.Name) and value is not None:
            n = target.value
            out = []
            for s in states:
                v = self.evaluate(value, s)
                if v is consts.NOT_CONST and n in self.lists:  # `my_list = [1, 2, 3]` only its kernels read
                    v = self.evaluate_list(value, s)
                s = dict(s)
                s[n] = (self.unknown(f"`{n} = {self.code(value)}` is not a compile-time constant")
                        if v is consts.NOT_CONST else v)
                out.append(s)
            return self.keys.dedupe(out)
        return self.opaque(_bound_names(small), states)

    def opaque(self, names: set[str], states: list[Env]) -> list[Env]:
        if not names:
            return states
        why = {n: self.unknown(f"`{n}` is bound in `{self.name}` in a way tilec cannot evaluate") for n in names}
        return self.keys.dedupe([{**s, **why} for s in states])


class StateKeys:
    """Texts that tell states apart: a value's repr, worked out once per value object. States share
    their values (each path's env is a shallow copy), and a repr walks a value whole (a kernel,
    a struct), so taking it again for every state after every statement made a long factory
    method (Newton's narrow_phase.py) take minutes."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[object, str]] = {}  # id(value) -> (value, its repr): kept alive

    def text(self, value: object) -> str:
        hit = self._texts.get(id(value))
        if hit is None or hit[0] is not value:
            hit = (value, repr(value))
            self._texts[id(value)] = hit
        return hit[1]

    def key(self, state: Env) -> tuple[tuple[str, str], ...]:
        """The state's names and values, as texts."""
        return tuple(sorted((k, self.text(v)) for k, v in state.items()))

    def dedupe(self, states: list[Env]) -> list[Env]:
        """The states in order, each first of the ones with its names and values."""
        seen: set[tuple[tuple[str, str], ...]] = set()
        out = []
        for s in states:
            key = self.key(s)
            if key not in seen:
                seen.add(key)
                out.append(s)
        return out


def read_only(fn: cst.FunctionDef) -> frozenset[str]:
    """The names the function binds once, by a plain assignment, and reads only inside its decorated defs
    (its kernels and funcs, which cannot change a host list): a list bound to one stays as made."""
    def find() -> frozenset[str]:
        counter = _Occurrences()
        fn.body.visit(counter)
        return frozenset(n for n, count in counter.outside.items() if count == 1 and n in counter.assigned)

    return _once(_READ_ONLY, fn, find)


class _Occurrences(cst.CSTVisitor):
    """Each name's occurrences outside decorated defs, and the names a single-target assignment binds."""

    def __init__(self) -> None:
        self.outside: dict[str, int] = {}
        self.assigned: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.outside[node.name.value] = self.outside.get(node.name.value, 0) + 1
        return not node.decorators  # a plain helper def may change a list: its uses count

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.assigned.add(node.targets[0].target.value)

    def visit_Name(self, node: cst.Name) -> None:
        self.outside[node.value] = self.outside.get(node.value, 0) + 1


def _body(block: cst.CSTNode) -> list[cst.CSTNode]:
    return list(block.body) if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []


class _Targets(cst.CSTVisitor):
    """Every name a statement binds, not looking into nested defs, classes or lambdas."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _add(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._add(e.value)
        elif isinstance(target, cst.StarredElement):
            self._add(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._add(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._add(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._add(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._add(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._add(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._add(node.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._add(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None and isinstance(node.name, cst.Name):
            self.names.add(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.names |= {n.name.value for n in node.names}

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names |= {n.name.value for n in node.names}


# Names found by walking a statement or def, per node: each call site reruns a body (once per env of its calls)
Found = dict[int, tuple[cst.CSTNode, frozenset[str]]]  # id(node) -> (it, its names)
_NAMES: Found = {}  # _bound_names
_READ_ONLY: Found = {}  # read_only


def _once(cache: Found, node: cst.CSTNode, find: Callable[[], frozenset[str]]) -> frozenset[str]:
    """find()'s names for node, worked out the first time it is asked."""
    hit = cache.get(id(node))
    if hit is None or hit[0] is not node:
        hit = (node, find())
        cache[id(node)] = hit
    return hit[1]


def _bound_names(node: cst.CSTNode) -> set[str]:
    def find() -> frozenset[str]:
        visitor = _Targets()
        node.visit(visitor)
        return frozenset(visitor.names)

    return set(_once(_NAMES, node, find))
