"""``python -m freeprob.cli``."""
import sys

from freeprob._signals import ignore_stops
from freeprob.cli.main import main

status = main()
if status in (130, 143):        # stopped by Ctrl-C or SIGTERM: another one during the exit is ignored
    ignore_stops()
sys.exit(status)
