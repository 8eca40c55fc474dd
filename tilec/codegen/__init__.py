"""Emission shared by the CPU and CUDA backends: C++ statements, kernel facts, manifest, loader."""
