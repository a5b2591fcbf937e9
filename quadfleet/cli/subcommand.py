"""How a subcommand's parser is made: :func:`add_command` (summary, description, notes and examples), the
help formatter it uses, and the AWS options every command that reaches AWS takes; shared by :mod:`.parser`
and :mod:`.fleet`. (Not the parsing of values: argparse does that, with the ``type=`` of each option.)"""
from __future__ import annotations

import argparse
import shutil
import textwrap

FORMAT_IDS = "{FORMAT_IDS}"  # in a help text: the extractor registry's format ids, read when help is shown
STATUS_WORDS = ("`quadfleet status`: a fleet run's progress (queue, committed, failed); `quadfleet fleet status`: "
                "the fleet's instances; `extract --http-status`: an HTTP status filter for index selection.")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples kept as written (filled by :func:`add_command`); ``FORMAT_IDS`` in an
    option's help becomes the registered format ids (imported only when help is shown)."""

    def _get_help_string(self, action) -> str:
        text = super()._get_help_string(action) or ""
        if FORMAT_IDS in text:
            from ..worker.extractors import EXTRACTORS

            text = text.replace(FORMAT_IDS, ", ".join(EXTRACTORS))
        return text

    def _split_lines(self, text: str, width: int) -> list[str]:  # never inside html-mf-hcard or a URL
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


def fill(text: str) -> str:
    """Paragraphs (separated by a blank line) filled as argparse fills help: to the terminal's width (at most
    100 columns)."""
    width = min(100, shutil.get_terminal_size().columns - 2)
    return "\n\n".join(textwrap.fill(" ".join(p.split()), width, break_on_hyphens=False)
                       for p in textwrap.dedent(text).split("\n\n"))


def add_command(sub, name: str, summary: str, about: str, examples: list[str], notes: str = "", **kw):
    """A subcommand: ``summary`` in its parent's list of commands, ``about`` heading its ``--help``, then
    ``notes`` and the ``examples`` (``quadfleet ...`` lines, each may end with ``  # a comment``)."""
    epilog = (fill(notes) + "\n\n" if notes else "") + "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(name, help=summary, description=fill(about), epilog=epilog,
                          formatter_class=HelpFormatter, **kw)


def add_aws_arguments(parser) -> None:
    """``--profile``, ``--region`` and ``--endpoint-url`` on a command that talks to AWS; how they act:
    :func:`quadfleet.worker.aws.aws_settings` (applied by :func:`quadfleet.cli.main.main`)."""
    g = parser.add_argument_group("AWS (as in the aws CLI: an option beats the environment, which beats the "
                                  "profile)")
    g.add_argument("--profile", help="the named profile of ~/.aws/config and ~/.aws/credentials to use "
                                     "(default: AWS_PROFILE, else the default profile); its credentials are used "
                                     "even if AWS_ACCESS_KEY_ID is set")
    g.add_argument("--region", help="the AWS region (default: AWS_REGION or AWS_DEFAULT_REGION, else the profile's "
                                    "region); a queue is always called in the region of its URL")
    g.add_argument("--endpoint-url", metavar="URL",
                   help="send every S3, SQS and other AWS request to this URL (a local S3 or SQS such as MinIO, "
                        "LocalStack, moto); default: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, else the "
                        "profile's endpoint_url, else AWS itself")
