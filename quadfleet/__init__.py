"""quadfleet: structured data of web pages (JSON-LD, microdata, RDFa, microformats) from WARC/ARC archives to
N-Quads, locally or on a spot fleet. ``quadfleet.worker`` is the per-input code, ``quadfleet.coordinator`` what
runs and gathers inputs, ``quadfleet.cli`` the command line."""
__version__ = "0.1.0"
