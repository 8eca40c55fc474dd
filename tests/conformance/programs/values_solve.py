import warp as wp


@wp.kernel
def solve3(a: wp.array(dtype=wp.mat33), b: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    A = a[tid] + wp.identity(n=3, dtype=float) * 4.0
    x[tid] = wp.inverse(A) @ b[tid]


@wp.kernel
def solve3_cramer(a: wp.array(dtype=wp.mat33d), b: wp.array(dtype=wp.vec3d), x: wp.array(dtype=wp.vec3d),
                  det: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    A = a[tid] + wp.diag(wp.vec3d(wp.float64(3.0), wp.float64(3.0), wp.float64(3.0)))
    At = wp.transpose(A)
    d = wp.determinant(A)
    x0 = wp.determinant(wp.matrix_from_rows(b[tid], At[1], At[2])) / d
    x1 = wp.determinant(wp.matrix_from_rows(At[0], b[tid], At[2])) / d
    x2 = wp.determinant(wp.matrix_from_rows(At[0], At[1], b[tid])) / d
    x[tid] = wp.vec3d(x0, x1, x2)
    det[tid] = d


@wp.kernel
def stvk_energy(F: wp.array(dtype=wp.mat22), mu: float, lam: float, energy: wp.array(dtype=float),
                stress: wp.array(dtype=wp.mat22)):
    tid = wp.tid()
    Fi = F[tid]
    E = (wp.transpose(Fi) @ Fi - wp.identity(n=2, dtype=float)) * 0.5
    tr = wp.trace(E)
    energy[tid] = mu * wp.ddot(E, E) + 0.5 * lam * tr * tr
    stress[tid] = Fi @ (E * (2.0 * mu) + wp.identity(n=2, dtype=float) * (lam * tr))
