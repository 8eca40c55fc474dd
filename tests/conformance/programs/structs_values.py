"""Structs holding Warp's vectors and matrices: arrays of rigid bodies, an environment struct."""
import warp as wp


@wp.struct
class Body:
    pos: wp.vec3
    vel: wp.vec3
    frame: wp.mat22
    mass: float


@wp.struct
class Env:
    gravity: wp.vec3
    dt: float


@wp.kernel
def step(bodies: wp.array(dtype=Body), env: Env, out: wp.array(dtype=Body), energy: wp.array(dtype=float)):
    i = wp.tid()
    b = bodies[i]
    n = Body()
    n.vel = b.vel + env.gravity * env.dt
    n.pos = b.pos + n.vel * env.dt
    n.frame = b.frame * b.mass
    n.mass = b.mass
    out[i] = n
    energy[i] = 0.5 * b.mass * wp.dot(n.vel, n.vel) + b.frame[0, 1] * b.pos[2]
