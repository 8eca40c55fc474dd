"""tilec: an ahead-of-time compiler for Python tile programs written against the Warp tile API."""

__version__ = "0.1.0"
