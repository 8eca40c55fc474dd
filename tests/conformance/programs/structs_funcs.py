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


# Funcs returning a struct without a return annotation: Warp infers it from the body
@wp.func
def advance_unannotated(s: State, force: float, dt: float):
    r = State()
    r.vel = s.vel + force * dt
    r.pos = s.pos + r.vel * dt
    return r


@wp.func
def make_state(pos: float, vel: float):
    return State(pos, vel)


@wp.func
def relay(pos: float, vel: float):
    return make_state(pos * 2.0, vel)


@wp.func
def pick(a: State, b: State, first: int):
    if first > 0:
        return a
    return b


@wp.kernel
def unannotated(pos: wp.array(dtype=float), vel: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = advance_unannotated(make_state(pos[i], vel[i]), 2.0, 0.25)
    t = pick(s, relay(vel[i], pos[i]), i % 2)
    out[i] = s.pos * t.vel + kinetic(t)
