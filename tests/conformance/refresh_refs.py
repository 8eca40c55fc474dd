"""Run every conformance case under Warp 1.19 on the CPU and store inputs, outputs and gradients in
refs/<id>.npz. CI compares tilec with these files and never needs Warp.

    python tests/conformance/refresh_refs.py [CASE_ID_SUBSTRING ...]

Needs `pip install warp-lang==1.19.0`. A CPU block has block_dim lanes (enable_cpu_blocks), like
tilec's. Inputs come from a generator seeded by the case id, so a refresh is reproducible.
"""
from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import REFS, BvhArg, Grid, HeldArr, MeshArg, Indexed, Scal, StructArg, StructArr, TextureArg, VolumeArg, all_cases, field_arr, field_view, slots  # noqa: E402

WARP_VERSION = "1.19.0"


def make_inputs(case) -> list:
    rng = np.random.default_rng(int(hashlib.sha256(case.id.encode()).hexdigest()[:8], 16))
    values = []
    for a in case.args:
        if isinstance(a, (StructArg, StructArr)):  # {field: value}; run_warp makes the struct (array)
            specs = a.fields if isinstance(a, StructArg) else \
                [(f[0], field_arr(a, f)) for f in a.fields]
            values.append({f: _make(rng, spec.data if isinstance(spec, TextureArg) else spec) for f, spec in specs})
        elif isinstance(a, HeldArr):  # {"field.e": element e's array, "scalar": one value per element}
            held = {f"{f}.{e}": _make(rng, spec) for f, spec in a.arrays for e in range(a.count)}
            held.update({f: _make(rng, field_arr(StructArr(a.struct, (a.count,), ()), (f, *rest)))
                         for f, *rest in a.scalars})
            values.append(held)
        elif isinstance(a, Grid):  # built from its points by each side: a placeholder
            values.append(np.zeros(0))
        elif isinstance(a, (MeshArg, TextureArg, VolumeArg)):  # {"points": ..., "indices": ...}; {"data": ...}
            values.append({f: _make(rng, spec) for f, spec in a.arrays()})
            if isinstance(a, VolumeArg) and a.nvdb:  # the volume saved as a NanoVDB file by Warp: its bytes
                values[-1]["data"] = nvdb_bytes(a, values[-1]["data"])
        elif isinstance(a, BvhArg):  # {"lowers": ..., "uppers": ...}
            lowers = _make(rng, a.lowers)
            values.append({"lowers": lowers, "uppers": lowers + _make(rng, a.extents),
                           **({"groups": _make(rng, a.groups)} if a.groups is not None else {})})
        elif isinstance(a, Indexed):  # (base, [index array or None per dimension])
            indices = [None if n is None else rng.integers(0, a.shape[d], n).astype(np.int32)
                       for d, n in enumerate(a.indices)]
            values.append((rng.standard_normal(a.base_shape).astype(a.dtype), indices))
        else:
            values.append(_make(rng, a))
    return values


def nvdb_bytes(a, data):
    """The bytes of the NanoVDB file Warp saves of the volume `a` makes of `data`, as uint8."""
    import tempfile

    import warp as wp  # (main imported and initialised it)

    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/volume.nvdb"
        a.make(wp, data).save_to_nvdb(path)
        with open(path, "rb") as f:
            return np.frombuffer(f.read(), np.uint8).copy()


def _make(rng, a):
    if isinstance(a, Scal):
        return np.array(a.value, dtype=a.dtype)
    if a.kind == "randn":
        v = rng.standard_normal(a.shape)
    elif a.kind == "rand":
        v = rng.random(a.shape)
    elif a.kind.startswith("halfint:"):  # integers plus one half: never 0, never within 0.5 of an integer
        _, lo, hi = a.kind.split(":")
        v = rng.integers(int(lo), int(hi), a.shape) + 0.5
    elif a.kind.startswith("int:"):
        _, lo, hi = a.kind.split(":")
        v = rng.integers(int(lo), int(hi), a.shape)
    elif a.kind == "ones":
        v = np.ones(a.shape)
    elif a.kind == "arange":
        v = np.arange(int(np.prod(a.shape))).reshape(a.shape)
    else:
        v = np.zeros(a.shape)
    return v.astype(a.dtype)


def output_seeds(case, values) -> dict:
    """The adjoint seeds of written float arrays, by slot key (cases.slots)."""
    rng = np.random.default_rng(int(hashlib.sha256((case.id + "/seed").encode()).hexdigest()[:8], 16))
    seeds = {}
    for key, a, _ in slots(case.args):
        if a.role != "in" and a.differentiable:
            seeds[key] = rng.standard_normal(a.shape).astype(a.dtype)
    return seeds


def load_program(path: Path):
    name = f"conformance_prog_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_warp(case, values, seeds, wp):
    program = load_program(case.path)
    HELD.clear()
    kernel = eval(case.warp_kernel or case.kernel, vars(program))  # our own case files, not user input
    grad = case.grad
    arrays = []
    for a, v in zip(case.args, values):
        if isinstance(a, StructArg):
            s = getattr(program, a.struct)()
            for f, spec in a.fields:
                if isinstance(spec, Scal):
                    setattr(s, f, v[f].tolist() if v[f].ndim else v[f][()].item())  # a vector field: a list
                elif isinstance(spec, TextureArg):  # kept alive in HELD, as a mesh
                    texture = HELD[f"texture{len(arrays)}.{f}"] = spec.make(wp, v[f].copy())
                    setattr(s, f, texture)
                else:
                    setattr(s, f, wp.array(v[f].copy(), dtype=wp.dtype_from_numpy(v[f].dtype), device="cpu",
                                           requires_grad=grad and spec.differentiable))
            arrays.append(s)
        elif isinstance(a, StructArr):
            struct = getattr(program, a.struct)
            data = np.zeros(a.shape, wp.zeros(1, dtype=struct, device="cpu").numpy().dtype)
            for f in a.fields:
                field_view(data, f[0])[...] = v[f[0]]
            arrays.append(wp.array(data, dtype=struct, device="cpu", requires_grad=grad))
        elif isinstance(a, HeldArr):  # Warp struct values holding Warp arrays (kept in HELD by slot key)
            items = []
            for e in range(a.count):
                s = getattr(program, a.struct)()
                for f, spec in a.arrays:
                    x = HELD[f"{len(arrays)}.{f}.{e}"] = wp.array(v[f"{f}.{e}"].copy(), device="cpu",
                                                                  requires_grad=grad and spec.differentiable)
                    setattr(s, f, x)
                for f, *_ in a.scalars:
                    setattr(s, f, v[f][e].item())
                items.append(s)
            arrays.append(wp.array(items, dtype=getattr(program, a.struct), device="cpu"))
        elif isinstance(a, Grid):  # built below, once its points are a Warp array
            arrays.append(None)
        elif isinstance(a, MeshArg):
            made = {f: wp.array(v[f], dtype=wp.int32 if f in ("indices", "groups") else wp.vec3, device="cpu")
                    for f, _ in a.arrays()}
            mesh = HELD[f"mesh{len(arrays)}"] = wp.Mesh(**made)
            arrays.append(mesh.id)
        elif isinstance(a, VolumeArg):  # its id, the volume kept alive in HELD
            volume = HELD[f"volume{len(arrays)}"] = a.make(wp, v["data"].copy())
            arrays.append(volume.id)
        elif isinstance(a, TextureArg):  # the texture itself (Warp's kernels take it, not an id)
            texture = HELD[f"texture{len(arrays)}"] = a.make(wp, v["data"].copy())
            arrays.append(texture)
        elif isinstance(a, BvhArg):
            made = {f: wp.array(v[f], dtype=wp.int32 if f == "groups" else wp.vec3, device="cpu") for f, _ in a.arrays()}
            bvh = HELD[f"bvh{len(arrays)}"] = wp.Bvh(**made)
            arrays.append(bvh.id)
        elif isinstance(a, Scal):  # a Python number; other widths as Warp's scalar type (overloads pick by it)
            arrays.append(v[()].item() if a.dtype in ("float32", "int32") else getattr(wp, a.dtype)(v[()].item()))
        elif isinstance(a, Indexed):
            base = wp.array(v[0].copy(), dtype=getattr(wp, a.value) if a.value else wp.dtype_from_numpy(v[0].dtype),
                            device="cpu")
            arrays.append(wp.indexedarray(base, [None if i is None else wp.array(i, device="cpu") for i in v[1]]))
        else:
            # a value type of Warp's (vec3ui) or one the program declares (mat22ui = wp.types.matrix(...))
            dtype = getattr(wp, a.value, None) or getattr(program, a.value) if a.value else wp.dtype_from_numpy(v.dtype)
            arrays.append(wp.array(v.copy(), dtype=dtype, device="cpu", requires_grad=grad and a.differentiable))
    for k, a in enumerate(case.args):
        if isinstance(a, Grid):
            grid = HELD[f"grid{k}"] = wp.HashGrid(*a.dims, device="cpu", dtype=getattr(wp, a.dtype))
            grid.build(arrays[a.points], a.radius, groups=None if a.groups is None else arrays[a.groups])
            arrays[k] = grid.id
    tape = wp.Tape()
    with tape:
        if case.launch == "tiled":
            wp.launch_tiled(kernel, dim=case.dim, inputs=arrays, block_dim=case.block_dim, device="cpu")
        else:
            wp.launch(kernel, dim=case.dim, inputs=arrays, block_dim=case.block_dim, device="cpu")
    # copies: a CPU array's numpy() shares its memory, and the backward pass may write to it again
    result = {f"out{key}": _warp_slot(case, arrays, key).copy() for key, a, _ in slots(case.args)
              if not isinstance(a, Indexed)}  # an indexed array is read only
    for k, (a, x) in enumerate(zip(case.args, arrays)):
        if isinstance(a, StructArr):  # Warp's numpy layout of one element: tilec's loader must match it
            result[f"layout{k}"] = np.zeros(0, x.numpy().dtype)
    if any(isinstance(a, Indexed) for a in case.args):
        # Warp 1.19 has no adjoint through an indexed array (array.h: its adj_address is empty) and its
        # Tape cannot take one: such a case names that in warp_wrong and finite differences are the oracle
        assert case.warp_wrong, f"{case.id}: an indexed array case needs warp_wrong (FD is its gradient oracle)"
        grad = False
    if grad:
        tape.backward(grads=_seed_arrays(case, arrays, seeds, wp))
        for key, a, get in slots(case.args):
            k, _, f = key.partition(".")
            x = arrays[int(k)]
            if not a.differentiable:
                continue
            if key in HELD:
                result[f"grad{key}"] = HELD[key].grad.numpy().copy()
            elif isinstance(case.args[int(k)], StructArr):
                result[f"grad{key}"] = field_view(x.grad.numpy(), f).copy()
            else:
                result[f"grad{key}"] = (getattr(x, f) if f else x).grad.numpy()
    return result


HELD: dict = {}  # slot key "k.field.e" -> the Warp array element e of argument k holds (run_warp)


def _warp_slot(case, arrays, key):
    """One slot (cases.slots) of Warp's launch values as numpy."""
    if key in HELD:
        return HELD[key].numpy()
    k, _, f = key.partition(".")
    x = arrays[int(k)]
    if isinstance(case.args[int(k)], StructArr):
        return field_view(x.numpy(), f)
    return (getattr(x, f) if f else x).numpy()


def _seed_arrays(case, arrays, seeds, wp):
    grads = {}
    for key, seed in seeds.items():
        if key in HELD:
            grads[HELD[key]] = seed
            continue
        k, _, f = key.partition(".")
        x, a = arrays[int(k)], case.args[int(k)]
        if isinstance(a, StructArr):  # one structured seed array per array of structs
            if x not in grads:
                grads[x] = np.zeros(x.shape, x.numpy().dtype)
            field_view(grads[x], f)[...] = seed
        else:
            grads[getattr(x, f) if f else x] = seed
    return {x: wp.array(s, dtype=x.dtype, device="cpu") for x, s in grads.items()}


def main(argv) -> int:
    import warp as wp

    assert wp.__version__ == WARP_VERSION, f"references come from warp-lang {WARP_VERSION}, not {wp.__version__}"
    wp.config.enable_cpu_blocks = True
    wp.config.quiet = True
    # A kernel cache of this run's own: Warp 1.19's module hash misses a @wp.func passed to tile_map
    # (edit its body and the hash stays), so a shared cache can hand back a stale build and stale refs.
    cache = tempfile.mkdtemp(prefix="tilec-refs-warp-cache-")
    wp.config.kernel_cache_dir = cache
    try:
        wp.init()
        return _refresh(argv, wp)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _refresh(argv, wp) -> int:
    REFS.mkdir(exist_ok=True)
    chosen = [c for c in all_cases() if not argv or any(s in c.id for s in argv)]
    for case in chosen:
        values = make_inputs(case)
        seeds = output_seeds(case, values)
        data = {}
        for k, v in enumerate(values):
            if isinstance(v, tuple):  # an indexed array
                data[f"in{k}"] = v[0]
                data.update({f"in{k}_idx{d}": i for d, i in enumerate(v[1]) if i is not None})
            else:
                data.update({f"in{k}.{f}": x for f, x in v.items()} if isinstance(v, dict) else {f"in{k}": v})
        data.update({f"seed{key}": s for key, s in seeds.items()})
        data.update(run_warp(case, values, seeds, wp))
        np.savez_compressed(case.ref_path, **data)  # (a NanoVDB file: mostly zeros)
        print(f"{case.id}: {len(data)} arrays")
    known = {c.ref_path.name for c in all_cases()}
    for stale in sorted(p for p in REFS.glob("*.npz") if p.name not in known):
        print(f"note: {stale.name} belongs to no case (remove it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
