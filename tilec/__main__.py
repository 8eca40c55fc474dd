"""`python -m tilec`: the command line."""
from .cli import main

main()
