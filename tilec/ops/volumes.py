"""Warp's sparse volumes in kernels (runtime volume.h): samples, voxel reads and stores, and the map
between world and index space, of float32, vec3f and int32 volumes.

`id` is a uint64, a volume's id: a kernel or func parameter the loader checks, or a value checked
where it is read (live_ids.h), as a mesh's. A sample's gradient flows into its coordinates only
(`volume_sample_f_gradient`, `_v_gradient`: the trilinear interpolation's slope; 0 under CLOSEST), and
`wp.volume_sample_grad_f`'s (`volume_sample_grad4`: the sample and its gradient in one walk of the
corners, the front end's op for the call and its `grad` argument) also through the weights' mixed second
derivatives; the voxels are constants of the kernel, as in
Warp. The transforms' adjoints apply the transposed matrix. A store has no adjoint (Warp's is not
differentiable): a kernel that writes a volume gets none.
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.types import FLOAT32, INT32, NONE, UINT64, Scalar, Type, VecT, describe
from .core import Bound, OpSpec, Param

VEC3F, VEC4F = VecT(FLOAT32, 3), VecT(FLOAT32, 4)
CLOSEST, LINEAR = 0, 1  # wp.Volume.CLOSEST, wp.Volume.LINEAR


def _id(b: Bound) -> None:
    if b.types["id"] != UINT64:
        b.fail("TC0201", f"`id` must be a volume's id (a uint64, `Volume.id`), got {describe(b.types['id'])}", "id")


def _typed(b: Bound, name: str, t: Type) -> None:
    given = b.types[name]
    if given == t or (name in b.weak and isinstance(given, Scalar) and isinstance(t, Scalar)
                      and (t.is_float or given.is_integral)):
        return
    b.fail("TC0201", f"`{name}` must be {describe(t)}, got {describe(given)}", name)


def _rule(result: Type, **operands: Type) -> Callable[[Bound], Type]:
    """The rule of an op taking a volume's id and `operands` (name -> type)."""
    def rule(b: Bound) -> Type:
        _id(b)
        for name, t in operands.items():
            _typed(b, name, t)
        return result

    return rule


ID, UVW, MODE = Param("id", "value"), Param("uvw", "value"), Param("sampling_mode", "value")
IJK = (Param("i", "value"), Param("j", "value"), Param("k", "value"))
INTS: dict[str, Type] = {"i": INT32, "j": INT32, "k": INT32}
SAMPLED: dict[str, Type] = {"volume_sample_f": FLOAT32, "volume_sample_v": VEC3F}  # -> the value type (LINEAR or CLOSEST)
LOOKUPS: dict[str, Type] = {"volume_lookup_f": FLOAT32, "volume_lookup_v": VEC3F, "volume_lookup_i": INT32}
STORES: dict[str, Type] = {"volume_store_f": FLOAT32, "volume_store_v": VEC3F, "volume_store_i": INT32}
TRANSFORMS = ("volume_index_to_world", "volume_world_to_index", "volume_index_to_world_dir",
              "volume_world_to_index_dir")

OPS = [
    *(OpSpec(name, (ID, UVW, MODE), _rule(t, uvw=VEC3F, sampling_mode=INT32), name,
             f"a {t} volume's sample at index-space coordinates (CLOSEST 0: the nearest voxel; LINEAR 1: trilinear; "
             "0 for a volume of another type)", adj_cpp=f"{name}_gradient", nondiff=frozenset({"id", "sampling_mode"}),
             runtime_call=True) for name, t in SAMPLED.items()),
    OpSpec("volume_sample_i", (ID, UVW), _rule(INT32, uvw=VEC3F), "volume_sample_i",
           "an int32 volume's value at the voxel nearest index-space coordinates", runtime_call=True),
    OpSpec("volume_sample_grad4", (ID, UVW, MODE), _rule(VEC4F, uvw=VEC3F, sampling_mode=INT32),
           "volume_sample_grad4", "(volume_sample_f, d volume_sample_f / d uvw): wp.volume_sample_grad_f's value and the "
           "`grad` it writes (0 under CLOSEST)", adj_cpp="volume_sample_grad4_gradient",
           nondiff=frozenset({"id", "sampling_mode"}), api=False, runtime_call=True),
    OpSpec("volume_sample_f_gradient", (ID, UVW, MODE, Param("adj", "value")),
           _rule(VEC3F, uvw=VEC3F, sampling_mode=INT32, adj=FLOAT32), "volume_sample_f_gradient",
           "d (volume_sample_f * adj) / d uvw", api=False, runtime_call=True),
    OpSpec("volume_sample_v_gradient", (ID, UVW, MODE, Param("adj", "value")),
           _rule(VEC3F, uvw=VEC3F, sampling_mode=INT32, adj=VEC3F), "volume_sample_v_gradient",
           "d dot(volume_sample_v, adj) / d uvw", api=False, runtime_call=True),
    OpSpec("volume_sample_grad4_gradient", (ID, UVW, MODE, Param("adj", "value")),
           _rule(VEC3F, uvw=VEC3F, sampling_mode=INT32, adj=VEC4F), "volume_sample_grad4_gradient",
           "d dot(volume_sample_grad4, adj) / d uvw", api=False, runtime_call=True),
    *(OpSpec(name, (ID, *IJK), _rule(t, **INTS), name,
             f"a {t} volume's voxel (i, j, k): its value, the background outside its tiles (0 for a volume of "
             "another type)", runtime_call=True) for name, t in LOOKUPS.items()),
    *(OpSpec(name, (ID, *IJK, Param("value", "value")), _rule(NONE, **INTS, value=t), name,
             f"write a {t} volume's voxel (i, j, k), if one of its tiles holds it", effect=True, runtime_call=True)
      for name, t in STORES.items()),
    *(OpSpec(name, (ID, Param("xyz" if "world_to" in name else "uvw", "value")),
             _rule(VEC3F, **{"xyz" if "world_to" in name else "uvw": VEC3F}), name,
             f"a point{' or direction' if name.endswith('_dir') else ''} mapped "
             f"{'from world to index' if 'world_to' in name else 'from index to world'} space"
             f"{' (the linear part only)' if name.endswith('_dir') else ''}",
             adj_cpp=f"{name.removesuffix('_dir')}_gradient", nondiff=frozenset({"id"}), runtime_call=True)
      for name in TRANSFORMS),
    *(OpSpec(f"{name}_gradient", (ID, Param("adj", "value")), _rule(VEC3F, adj=VEC3F), f"{name}_gradient",
             f"the adjoint of {name}'s point: the transposed linear part times adj", api=False, runtime_call=True)
      for name in ("volume_index_to_world", "volume_world_to_index")),
]
VOLUME_OPS = frozenset(spec.name for spec in OPS if spec.api)  # their `id` is a volume's
