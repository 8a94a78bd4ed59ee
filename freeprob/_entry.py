"""The ``freeprob`` console script: :func:`main`, which imports the command line
(:mod:`freeprob.cli`, about half a second: sympy, python-flint) only once a Ctrl-C can be
answered, so one during that import ends with the one line and status 130 as everywhere else
(docs/guide/cli.md) instead of a traceback."""
import sys

__all__ = ["main"]


def main(argv=None):
    """Run the ``freeprob`` command (:func:`freeprob.cli.main.main`) and return its exit status;
    a Ctrl-C while the command line is imported: ``freeprob: interrupted`` on standard error,
    status 130.  Raises nothing else of its own.  Source: docs/guide/cli.md."""
    try:
        from freeprob.cli.main import main as run
    except KeyboardInterrupt:
        sys.stderr.write("freeprob: interrupted\n")
        return 130
    status = run(argv)
    if status in (130, 143):    # stopped by Ctrl-C or SIGTERM: another one during the exit is ignored
        from freeprob._signals import ignore_stops
        ignore_stops()
    return status
