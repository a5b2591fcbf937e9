"""``python -m quadfleet``: the ``quadfleet`` command (its entry point, allocator choice included)."""
import sys

from .launch import main

if __name__ == "__main__":
    sys.exit(main())
