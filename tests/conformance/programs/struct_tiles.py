"""Tiles whose elements are @wp.struct values: loads and stores of arrays of structs, tile_map over
funcs of structs, field-wise sums and + / -, element reads and writes, layout ops."""
import warp as wp

TILE = 8


@wp.struct
class Particle:
    mass: float
    vel: wp.vec3


@wp.struct
class Cell:
    body: Particle
    weight: float


@wp.func
def kinetic(p: Particle) -> float:
    return 0.5 * p.mass * wp.dot(p.vel, p.vel)


@wp.func
def cell_weight(c: Cell) -> float:
    return c.weight * c.body.mass


@wp.func
def drag(p: Particle, k: float) -> Particle:
    q = Particle()
    q.mass = p.mass
    q.vel = p.vel * (1.0 - k)
    return q


@wp.kernel
def copy_twice(src: wp.array[Particle], dst: wp.array[Particle]):
    i = wp.tid()
    t = wp.tile_load(src, shape=TILE, offset=i * TILE)
    wp.tile_store(dst, t + t, offset=i * TILE)


@wp.kernel
def energies(src: wp.array[Particle], e: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(src, shape=TILE, offset=i * TILE)
    wp.tile_store(e, wp.tile_map(kinetic, t), offset=i * TILE)


@wp.kernel
def dragged(src: wp.array[Particle], dst: wp.array[Particle]):
    i = wp.tid()
    t = wp.tile_load(src, shape=TILE, offset=i * TILE)
    wp.tile_store(dst, wp.tile_map(drag, t, 0.25), offset=i * TILE)


@wp.kernel
def totals(src: wp.array[Particle], total: wp.array[Particle]):
    t = wp.tile_load(src, shape=TILE, storage="shared")
    wp.tile_store(total, wp.tile_sum(t))


@wp.kernel
def row_totals(src: wp.array2d[Particle], total: wp.array[Particle]):
    t = wp.tile_load(src, shape=(2, TILE))
    wp.tile_store(total, wp.tile_sum(t, axis=1))


@wp.kernel
def picked(src: wp.array[Particle], out: wp.array[float]):
    _b, lane = wp.tid()
    t = wp.tile_load(src, shape=TILE)
    p = t[3]
    if lane == 0:
        out[0] = p.mass + t[5].vel[1]


@wp.kernel
def nested_weights(src: wp.array[Cell], w: wp.array[float]):
    t = wp.tile_load(src, shape=TILE)
    wp.tile_store(w, wp.tile_map(cell_weight, t))


@wp.kernel
def difference(a: wp.array[Particle], b: wp.array[Particle], out: wp.array[Particle]):
    ta = wp.tile_load(a, shape=TILE)
    tb = wp.tile_load(b, shape=TILE)
    acc = wp.tile_zeros(shape=TILE, dtype=Particle)
    acc += ta
    acc -= tb
    wp.tile_store(out, acc)


@wp.kernel
def reversed_rows(src: wp.array2d[Particle], dst: wp.array2d[Particle]):
    t = wp.tile_load(src, shape=(2, 4))
    wp.tile_store(dst, wp.tile_transpose(t))


@wp.kernel
def filled(value: wp.array[Particle], dst: wp.array[Particle]):
    t = wp.tile_full(TILE, value=value[0], dtype=Particle)
    t[2] = value[1]
    wp.tile_store(dst, t)


@wp.kernel
def scattered(src: wp.array[Particle], dst: wp.array[Particle]):
    _b, lane = wp.tid()
    t = wp.tile_zeros(shape=4, dtype=Particle)
    wp.tile_scatter_add(t, lane % 4, src[lane], True)
    wp.tile_store(dst, t)


@wp.kernel
def from_lane(src: wp.array[Particle], dst: wp.array[Particle]):
    _b, lane = wp.tid()
    f = wp.tile_from_thread(shape=TILE, value=src[lane], thread_idx=2)
    wp.tile_store(dst, f)


@wp.struct
class Tagged:
    flag: wp.bool
    small: wp.int8
    count: wp.int32
    value: float


@wp.kernel
def tagged_totals(src: wp.array[Tagged], acc: wp.array[Tagged], total: wp.array[Tagged], twice: wp.array[Tagged]):
    t = wp.tile_load(src, shape=TILE)
    wp.tile_atomic_add(acc, t)
    wp.tile_store(total, wp.tile_sum(t))
    wp.tile_store(twice, t + t)


@wp.func
def cell_energy(c: Cell) -> float:
    return kinetic(c.body) * c.weight


@wp.func
def heavier(c: Cell) -> Cell:
    out = Cell()
    out.body = drag(c.body, 0.5)
    out.weight = c.weight + 1.0
    return out


@wp.kernel
def cell_energies(src: wp.array[Cell], e: wp.array[float]):
    t = wp.tile_load(src, shape=TILE)
    wp.tile_store(e, wp.tile_map(cell_energy, wp.tile_map(heavier, t)))


@wp.kernel
def tagged_axis_totals(src: wp.array2d[Tagged], rows: wp.array[Tagged], cols: wp.array[Tagged]):
    t = wp.tile_load(src, shape=(2, TILE))
    wp.tile_store(rows, wp.tile_sum(t, axis=1))
    wp.tile_store(cols, wp.tile_sum(t, axis=0))


@wp.kernel
def tagged_middle_axis(src: wp.array3d[Tagged], out: wp.array2d[Tagged]):
    t = wp.tile_load(src, shape=(2, 3, 4))
    wp.tile_store(out, wp.tile_sum(t, axis=1))


@wp.func
def heaviest(a: Particle, b: Particle) -> Particle:
    out = Particle()
    if a.mass > b.mass:
        out = a
    else:
        out = b
    return out


@wp.func
def merged(a: Particle, b: Particle) -> Particle:
    out = Particle()
    out.mass = a.mass + b.mass
    out.vel = a.vel + b.vel
    return out


@wp.func
def merged_cells(a: Cell, b: Cell) -> Cell:
    out = Cell()
    out.body = merged(a.body, b.body)
    out.weight = wp.max(a.weight, b.weight)
    return out


@wp.kernel
def reduced_heaviest(src: wp.array[Particle], out: wp.array[Particle]):
    t = wp.tile_load(src, shape=TILE)
    wp.tile_store(out, wp.tile_reduce(heaviest, t))


@wp.kernel
def reduced_grid(src: wp.array3d[Particle], out: wp.array[Particle], mass: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(src[i], shape=(3, 5))
    total = wp.tile_reduce(merged, t)
    wp.tile_store(out, total, offset=i)
    wp.tile_store(mass, wp.tile_map(kinetic, total), offset=i)


@wp.kernel
def reduced_cells(src: wp.array[Cell], out: wp.array[Cell]):
    t = wp.tile_load(src, shape=6)
    wp.tile_store(out, wp.tile_reduce(merged_cells, t))
