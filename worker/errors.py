"""One exception per failure class, each with a message that names the input and says what is wrong."""


class QuadfleetError(Exception):
    """Base: the CLI prints it as one line, never as a traceback."""


class ConfigError(QuadfleetError):
    """A configuration file or option is invalid: refused before any work starts."""


class InputError(QuadfleetError):
    """An input cannot be found, named or opened."""


class InputMissing(InputError):
    """The input does not exist (404, NoSuchKey): retrying cannot help, so the fleet does not retry it."""


class ArchiveError(QuadfleetError):
    """An archive is not a readable WARC/ARC, or breaks off: that archive fails, the others go on."""


class RangeUnsatisfiable(QuadfleetError):
    """A byte range starts past the end of its archive (HTTP 416): the records it should hold are lost,
    counted, and the rest of the selection goes on."""


class Interrupted(Exception):
    """Work was asked to stop (SIGTERM, a spot notice) before the input was done: nothing is committed."""
