"""``python -m quadfleet.cli``: the same as the ``quadfleet`` command."""
import sys

from .main import main

if __name__ == "__main__":  # (not on import: the docs' generator imports every module to read its docstrings)
    sys.exit(main())
