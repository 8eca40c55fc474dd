from typing import Any

import warp as wp


@wp.struct
class Material:
    stiffness: float
    damping: float
    count: wp.int32
    rest: wp.array(dtype=float)


@wp.struct
class Pair:
    a: float
    b: float


@wp.struct
class Bad:
    v: wp.tile(dtype=float, shape=(4,))  # ERROR TC0409: struct field `Bad.v`: a tile cannot be a struct field
    w: float = 1.0  # ERROR TC0401: struct field `Bad.w`: default values are not supported
    __dict__: float  # ERROR TC0002: struct field `Bad.__dict__` starts with `__`, reserved for Python


@wp.func
def no_annotation(pairs: wp.array(dtype=Pair), flip: int):
    q = pairs[flip]
    return q  # ERROR TC0410: returning a `Pair` struct from a func needs the return annotation `-> Pair`


@wp.func
def returns_parameter(m: Material):  # returns a Material, as Warp infers it
    return m


@wp.func
def with_effect(m: Material, out: wp.array(dtype=float)) -> Pair:
    out[0] = m.stiffness
    return Pair(out[0], m.damping)  # a field that reads what the func writes: its effect runs in one instance only


@wp.func
def holds_arrays(m: Material) -> Material:
    return m


@wp.kernel
def fields(m: Material, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = m.stifness  # ERROR TC0311: struct `Material` has no field `stifness` (its fields: stiffness, damping, count, rest)
    m.dampng = 2.0  # ERROR TC0311: struct `Material` has no field `dampng`
    m.count = 1.5  # ERROR TC0201: field `Material.count` is an int32 scalar, the value is a float
    m.damping = i  # ERROR TC0201: field `Material.damping` is a float32 scalar, the value is an int32 scalar
    out[i] = m + 1.0  # ERROR TC0201: a `Material` struct cannot be used here; read one of its fields
    s = Material()
    out[i] = s.rest[i]  # ERROR TC0312: field `rest` of `s` is read before it is assigned
    t = Material(stiffness=1.0)  # ERROR TC0303: `Material(...)` takes no values or all 4 fields (as in Warp); missing: damping, count, rest
    u = with_effect(m, out)  # ERROR TC0401: `with_effect` returns a struct and has effects, and line 41 depends on one
    v = holds_arrays(m)  # ERROR TC0401: `holds_arrays` returns `Material`, which holds arrays (rest)
    p = Pair(1.0, 2.0)
    p.a = p  # ERROR TC0201: field `Pair.a` is a float32 scalar, the value is a `Pair` struct
    returns_parameter(m)  # ERROR TC0401: `returns_parameter` returns `Material`, which holds arrays (rest)


@wp.struct
class Bundle:
    items: wp.array(dtype=Material)


@wp.func
def first_rest(ms: wp.array(dtype=Material)) -> float:
    return ms[0].rest[0]


@wp.func
def first_item(bs: wp.array(dtype=Bundle)) -> float:  # ERROR TC0409: parameter `bs`: an array of `Bundle` structs, which hold arrays of structs (items), is not supported
    return 0.0


@wp.kernel
def array_of_holders(ms: wp.array[Material], other: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = ms[i].rest[0] + first_rest(ms)
    ms[i].rest = other  # ERROR TC0401: assignment to the array field `rest` of an element of a 1-d Material array


@wp.kernel
def generic_first(ms: wp.array(dtype=Any), out: wp.array(dtype=float)):
    out[0] = ms[0].rest[0]


wp.overload(generic_first, [wp.array(dtype=Material), wp.array(dtype=float)])
wp.overload(generic_first, [wp.array(dtype=Bundle), wp.array(dtype=float)])  # ERROR TC0409: overload of `generic_first`, parameter `ms`: an array of `Bundle` structs, which hold arrays of structs (items)
