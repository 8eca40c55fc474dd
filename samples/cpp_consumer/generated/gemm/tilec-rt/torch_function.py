"""PyTorch bridge of a tilec module (tilec-rt, tilec 0.1.0): a kernel as a torch.autograd.Function.

    Gemm = <module>.<kernel>.torch_function(dim=(4, 3), outputs=["C"])
    C = Gemm.apply(A, B, torch.zeros(M, N))     # every kernel argument, in order
    C.sum().backward()                          # runs the generated adjoint: A.grad, B.grad

`outputs` names the array parameters the kernel writes; they are returned (a tuple when several)
and the tensors passed for them are only their initial contents (cloned, never written, not
differentiated). Array arguments are tensors on the CPU or one CUDA device (launched on "cpu" or
"cuda"), never copied; scalars are numbers. Imported only when torch_function is called, so the
loader needs no torch.
"""


def function(kernel, dim, outputs, device=None):
    import torch

    names = [p["name"] for p in kernel.params]
    indexed = [p["name"] for p in kernel.params if p["kind"] == "indexedarray"]
    if indexed:
        raise ValueError(f"{kernel.name}: torch_function does not take indexed arrays (`{indexed[0]}`)")
    for name in outputs:
        if name not in names:
            raise ValueError(f"{kernel.name}: torch_function: no parameter `{name}` (parameters: {', '.join(names)})")
        if kernel.params[names.index(name)]["kind"] != "array":
            raise ValueError(f"{kernel.name}: torch_function: output `{name}` is not an array")
    if not outputs:
        raise ValueError(f"{kernel.name}: torch_function: name the array parameters the kernel writes in `outputs`")
    out_index = [names.index(n) for n in outputs]
    differentiable = [p["kind"] == "array" and p["dtype"] in ("float16", "float32", "float64") for p in kernel.params]
    launch = kernel.launch_tiled if kernel.meta["tiled"] else kernel.launch

    def device_of(values):
        if device is not None:
            return device
        tensors = [v for v in values if isinstance(v, torch.Tensor)]
        return "cuda" if tensors and tensors[0].is_cuda else "cpu"

    class KernelFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            if len(args) != len(kernel.params):
                raise TypeError(f"{kernel.name}: expects {len(kernel.params)} arguments ({', '.join(names)}), "
                                f"got {len(args)}")
            values = []
            for i, (p, a) in enumerate(zip(kernel.params, args)):
                if p["kind"] == "array":
                    if not isinstance(a, torch.Tensor):
                        raise TypeError(f"{kernel.name}: argument `{p['name']}` must be a torch.Tensor, "
                                        f"got {type(a).__name__}")
                    a = a.detach()
                    values.append(a.clone() if i in out_index else a)
                else:
                    values.append(a.item() if isinstance(a, torch.Tensor) else a)
            ctx.device = device_of(values)
            launch(dim=dim, inputs=values, device=ctx.device)
            ctx.values = values
            result = tuple(values[i] for i in out_index)
            return result[0] if len(result) == 1 else result

        @staticmethod
        def backward(ctx, *grad_outputs):
            # the returned outputs became autograd tensors: launch on detached views of them
            values = [v.detach() if isinstance(v, torch.Tensor) else v for v in ctx.values]
            seeds = dict(zip(out_index, grad_outputs))
            adjoints = []
            for i, (p, v) in enumerate(zip(kernel.params, values)):
                if not differentiable[i]:
                    adjoints.append(None if p["kind"] == "array" else 0)
                elif i in seeds:
                    g = seeds[i]
                    adjoints.append(torch.zeros_like(v) if g is None else g.detach().contiguous().clone())
                else:
                    adjoints.append(torch.zeros_like(v))
            launch(dim=dim, inputs=values, adj_inputs=adjoints, adjoint=True, device=ctx.device)
            return tuple(adjoints[i] if differentiable[i] and i not in seeds and ctx.needs_input_grad[i] else None
                         for i in range(len(values)))

    KernelFunction.__name__ = KernelFunction.__qualname__ = f"{kernel.name}_function"
    return KernelFunction
