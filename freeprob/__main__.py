"""``python -m freeprob``: the ``freeprob`` command (:func:`freeprob.cli.main.main`).

Part of the cli layer (docs/architecture.md), though it sits at the package's top."""
import sys

from freeprob.cli.main import main

sys.exit(main())
