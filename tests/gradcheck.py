"""Gradient checking: a kernel's adjoint launch against float64 central finite differences.

The loss is sum(w * out) over the output arrays, with fixed random weights w
that are passed as the outputs' adjoints. Outputs are zeroed before every
forward launch.
"""
from __future__ import annotations

import numpy as np


def loss(kernel, dim, args, outputs, weights, tiled):
    for k in outputs:
        args[k][...] = 0
    launch = kernel.launch_tiled if tiled else kernel.launch
    launch(dim=dim, inputs=args)
    return sum(float(np.sum(weights[k] * args[k])) for k in outputs)


def check_gradients(kernel, dim, args, outputs, wrt, tiled=True, h=1e-6, rtol=1e-6, atol=1e-8, seed=0,
                    samples=None):
    """Assert the adjoint of `wrt` arrays matches finite differences of sum(w * outputs).

    samples: check only this many randomly chosen elements of each input (large inputs).
    """
    rng = np.random.default_rng(seed)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    weights = {k: rng.standard_normal(args[k].shape).astype(args[k].dtype) for k in outputs}
    adj = [np.zeros_like(a) if isinstance(a, np.ndarray) else 0 for a in args]
    for k in outputs:
        adj[k] = weights[k].copy()
    for k in outputs:
        args[k][...] = 0
    launch = kernel.launch_tiled if tiled else kernel.launch
    launch(dim=dim, inputs=args, adj_inputs=adj, adjoint=True)
    for k in wrt:
        numeric = np.zeros_like(args[k])
        flat = args[k].reshape(-1)
        chosen = range(flat.size) if samples is None else rng.choice(flat.size, min(samples, flat.size), False)
        for i in chosen:
            old = flat[i]
            flat[i] = old + h
            up = loss(kernel, dim, args, outputs, weights, tiled)
            flat[i] = old - h
            down = loss(kernel, dim, args, outputs, weights, tiled)
            flat[i] = old
            numeric.reshape(-1)[i] = (up - down) / (2 * h)
        picked = np.zeros(flat.size, bool)
        picked[list(chosen)] = True
        picked = picked.reshape(args[k].shape)
        np.testing.assert_allclose(adj[k][picked], numeric[picked], rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {k}")
