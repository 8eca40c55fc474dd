"""One step of an n-body simulation on Warp's value types: positions and velocities are arrays of
wp.vec3, each block takes a tile of BLOCK bodies and sums the pull of every other body on them,
one tile of bodies at a time, as a (BLOCK, BLOCK) tile of vec3 pairwise accelerations reduced
along its rows; then it steps velocities and positions with tile arithmetic on vec3 tiles."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

BODIES = 256
BLOCK = 32
SOFTENING = 0.01
DT = 0.01


@wp.func
def pull(p: wp.vec3, q: wp.vec3, m: float) -> wp.vec3:
    """The acceleration body q of mass m gives a body at p: m (q - p) / (|q - p|^2 + eps)^1.5."""
    return (q - p) * (m * wp.pow(wp.dot(q - p, q - p) + SOFTENING, -1.5))


@wp.kernel
def step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float),
         new_pos: wp.array(dtype=wp.vec3), new_vel: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = wp.tile_load(pos, shape=BLOCK, offset=i * BLOCK)
    here = wp.tile_broadcast(wp.tile_reshape(p, shape=(BLOCK, 1)), shape=(BLOCK, BLOCK))
    acc = wp.tile_zeros(shape=BLOCK, dtype=wp.vec3)
    for j in range(BODIES // BLOCK):
        q = wp.tile_load(pos, shape=BLOCK, offset=j * BLOCK)
        m = wp.tile_load(mass, shape=BLOCK, offset=j * BLOCK)
        there = wp.tile_broadcast(wp.tile_reshape(q, shape=(1, BLOCK)), shape=(BLOCK, BLOCK))
        weight = wp.tile_broadcast(wp.tile_reshape(m, shape=(1, BLOCK)), shape=(BLOCK, BLOCK))
        acc += wp.tile_sum(wp.tile_map(pull, here, there, weight), axis=1)
    v = wp.tile_load(vel, shape=BLOCK, offset=i * BLOCK) + acc * DT
    wp.tile_store(new_vel, v, offset=i * BLOCK)
    wp.tile_store(new_pos, p + v * DT, offset=i * BLOCK)


def reference(pos, vel, mass):
    d = pos[None, :, :] - pos[:, None, :]
    inv_r = 1.0 / np.sqrt((d * d).sum(-1) + SOFTENING)
    acc = (d * (mass[None, :] * inv_r**3)[:, :, None]).sum(1)
    v = vel + acc * DT
    return pos + v * DT, v


def bodies(seed=0):
    rng = np.random.default_rng(seed)
    pos = rng.standard_normal((BODIES, 3)).astype(np.float32)
    vel = 0.1 * rng.standard_normal((BODIES, 3)).astype(np.float32)
    mass = rng.uniform(0.5, 1.5, BODIES).astype(np.float32)
    return pos, vel, mass


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "nbody"))
    pos, vel, mass = bodies()
    new_pos, new_vel = np.zeros_like(pos), np.zeros_like(vel)
    mod.step.launch_tiled(dim=BODIES // BLOCK, inputs=[pos, vel, mass, new_pos, new_vel])
    want_pos, want_vel = reference(pos.astype(np.float64), vel.astype(np.float64), mass.astype(np.float64))
    assert np.allclose(new_vel, want_vel, rtol=1e-4, atol=1e-5), "nbody velocity mismatch"
    assert np.allclose(new_pos, want_pos, rtol=1e-4, atol=1e-5), "nbody position mismatch"
    print("nbody ok")
