"""`python -m tilec` and the `tilec` script: the command line, after the no-op rebuild's shortcut
(uptodate.answer), which answers an unchanged `tilec build` before click and the CLI load."""
import sys


def main() -> None:
    from . import uptodate

    if uptodate.answer(sys.argv[1:]):
        sys.exit(0)
    from .cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()
