"""`python -m tilec` and the `tilec` script: the command line, after the no-op rebuild's shortcut
(uptodate.answer), which answers an unchanged `tilec build` before click and the CLI load."""
import os
import sys

# `python -m tilec` puts the working folder first on sys.path: inside a Warp project (Newton's newton/
# holds a math.py) its modules would shadow the standard library's that click and tilec import. tilec
# never imports the user's files, so that entry goes (its own package is imported already).
if __name__ == "__main__" and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]


def main() -> None:
    from . import uptodate

    if uptodate.answer(sys.argv[1:]):
        sys.exit(0)
    from .cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()
