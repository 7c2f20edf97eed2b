"""``python -m examples``: run every example on the current backend (see examples.run_all)."""

import sys

from examples.run_all import main

sys.exit(main())
