"""The ``quadfleet`` command: :mod:`.main` runs it; :mod:`.parser` builds its parser (each subcommand's made
as :mod:`.subcommand` says, ``fleet``'s by :mod:`.fleet`); what each subcommand does is a ``cmd_*`` function
of :mod:`.page`, :mod:`.extract`, :mod:`.queue`, :mod:`.stats` or :mod:`.merge`, after the checks of
:mod:`.checks`."""
from .main import main

__all__ = ["main"]
