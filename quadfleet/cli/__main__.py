"""``python -m quadfleet.cli``: the same as the ``quadfleet`` command."""
import sys

from .main import main

sys.exit(main())
