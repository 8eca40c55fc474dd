"""The CPU backend: the .cpp and C header templates and the C++ compiler driver."""
