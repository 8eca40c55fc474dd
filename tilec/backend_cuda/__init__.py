"""The CUDA backend: the GPU tile model, the .cu template and the nvcc driver."""
