"""Emission shared by the CPU and CUDA backends."""
