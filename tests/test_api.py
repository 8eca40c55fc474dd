"""`import tilec as wp`: the inert stand-ins a program run as a script sees, and AttributeError with a
suggestion for everything else (a misspelt name must not silently do nothing)."""
from __future__ import annotations

import pytest

import tilec as wp


def test_api_names_are_stand_ins():
    assert wp.constant(3) == 3
    assert repr(wp.array2d(dtype=float)) == "<tilec api array2d>"
    assert repr(wp.float32) == "<tilec api float32>"
    assert repr(wp.Texture3D) == "<tilec api Texture3D>"  # an annotation, evaluated where a script defines a kernel

    @wp.kernel
    def k():
        pass

    assert k.__name__ == "k"
    with pytest.raises(RuntimeError, match="runs only inside a compiled kernel"):
        wp.tile_load(None, shape=(4,))
    from tilec import tile_sum  # from-imports go through the same lookup

    assert repr(tile_sum) == "<tilec api tile_sum>"


@pytest.mark.parametrize("name, message", [
    ("tile_lod", "module 'tilec' has no attribute 'tile_lod'; did you mean 'tile_load'?"),
    ("expp", "module 'tilec' has no attribute 'expp'; did you mean 'exp'?"),
    ("tile_bvh_query_ray", "module 'tilec' has no attribute 'tile_bvh_query_ray'"),
    ("anything", "module 'tilec' has no attribute 'anything'"),
])
def test_unknown_names_raise_attribute_error_with_a_close_suggestion(name, message):
    with pytest.raises(AttributeError) as info:
        getattr(wp, name)
    assert str(info.value) == message
    assert not hasattr(wp, name)


def test_warp_host_calls_name_the_generated_modules_way():
    with pytest.raises(AttributeError, match=r"mod = tilec.load\(folder\); mod.<kernel>.launch_tiled\(...\)"):
        wp.launch_tiled(dim=(1,), inputs=[])
    with pytest.raises(AttributeError, match="generated module's tape"):
        wp.Tape()
