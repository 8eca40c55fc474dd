import warp as wp

# Found by bench/fuzz_hostile.py: a shift by a float is Python's TypeError at import, not a crash of tilec.
SCALE = 1 << 700.1767766952966  # ERROR TC0201: unsupported operand types for `<<`: int and float


@wp.kernel
def scaled(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * float(SCALE)
