"""``python -m freeprob.cli``: the console script's entry point (:func:`freeprob._entry.main`)."""
import sys

from freeprob._entry import main

sys.exit(main())
