"""The ``quadfleet`` command: :mod:`.main` runs it, :mod:`.parser` (with :mod:`.parsing` and :mod:`.fleet`)
builds its parser, :mod:`.commands` holds what each subcommand does."""
from .main import main

__all__ = ["main"]
