"""The ``freeprob`` command line: :func:`main` (entry point), the expression language
(:mod:`freeprob.cli.expr`), the law commands and the experiment commands."""
from freeprob.cli.main import BROKEN_PIPE_STATUS, PRESET_LAWS, _config_list, build_parser, main, table

__all__ = ["main", "PRESET_LAWS", "BROKEN_PIPE_STATUS", "build_parser", "table"]
