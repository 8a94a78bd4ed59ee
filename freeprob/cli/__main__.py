"""``python -m freeprob.cli``."""
import sys

from freeprob.cli.main import main

sys.exit(main())
