"""`python -m gjkcli` and the `gjk` command's entry: Ctrl-C is handled from the first import on.

Only the standard library is imported before the command: a SIGINT while click, numpy or trimesh
import ends the run with one line and exit code 130 (128 + SIGINT), never a traceback.
"""
import sys

from gjkcli.errors import EXIT_INTERRUPTED


def run():
    try:
        from gjkcli.cli import main

        return main()
    except KeyboardInterrupt:
        sys.stderr.write("gjk: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    run()
