"""Arrays of structs: element field reads and writes, whole-element copies, nested structs."""
import warp as wp


@wp.struct
class Particle:
    pos: float
    vel: float
    mass: float
    tag: wp.int32


@wp.struct
class Bounds:
    lo: float
    hi: float


@wp.struct
class Cell:
    density: float
    box: Bounds
    count: wp.int16


@wp.kernel
def kick(ps: wp.array(dtype=Particle), force: wp.array(dtype=float), dt: float, out: wp.array(dtype=Particle)):
    i = wp.tid()
    p = ps[i]
    q = Particle()
    q.vel = p.vel + force[i] / (1.0 + p.mass) * dt
    q.pos = p.pos + q.vel * dt
    q.mass = p.mass
    q.tag = p.tag + 1
    out[i] = q


@wp.kernel
def cell_mass(cells: wp.array(dtype=Cell), scale: wp.array(dtype=float), mass: wp.array(dtype=float)):
    i = wp.tid()
    c = cells[i]
    width = c.box.hi - c.box.lo
    mass[i] = c.density * width * width * scale[i] + float(c.count)


@wp.kernel
def accumulate(ps: wp.array(dtype=Particle), src: wp.array(dtype=float), energy: wp.array(dtype=float)):
    i = wp.tid()
    ps[i].vel += src[i]
    ps[i].pos = ps[i].mass * src[i]
    energy[i] = 0.5 * ps[i].mass * src[i] * src[i]
