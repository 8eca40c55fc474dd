"""Structs through @wp.func: taking a struct, returning a struct, struct locals in loops."""
import warp as wp


@wp.struct
class State:
    pos: float
    vel: float


@wp.struct
class Body:
    state: State
    inv_mass: float


@wp.func
def advance(s: State, force: float, dt: float) -> State:
    r = State()
    r.vel = s.vel + force * dt
    r.pos = s.pos + r.vel * dt
    return r


@wp.func
def kinetic(s: State) -> float:
    return 0.5 * s.vel * s.vel


@wp.func
def make_body(pos: float, vel: float, m: float) -> Body:
    return Body(State(pos, vel), 1.0 / m)


@wp.kernel
def integrate(pos: wp.array(dtype=float), vel: wp.array(dtype=float), force: wp.array(dtype=float),
              out_pos: wp.array(dtype=float), energy: wp.array(dtype=float)):
    i = wp.tid()
    s = State(pos[i], vel[i])
    for _ in range(3):
        s = advance(s, force[i], 0.1)
    out_pos[i] = s.pos
    energy[i] = kinetic(s)


@wp.kernel
def bodies(pos: wp.array(dtype=float), vel: wp.array(dtype=float), mass: wp.array(dtype=float),
           out: wp.array(dtype=float)):
    i = wp.tid()
    b = make_body(pos[i], vel[i], mass[i])
    b.state = advance(b.state, b.inv_mass, 0.5)
    out[i] = b.state.pos * b.inv_mass + kinetic(b.state)
