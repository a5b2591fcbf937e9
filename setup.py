"""The C accelerators, each an optional extension loaded (or its Python fallback chosen) by worker/native.py, which
reports which run; everything else about the package is in pyproject.toml.

Here rather than in pyproject.toml's ``[tool.setuptools.ext-modules]``, which setuptools still calls experimental and
said so at every install. tests/layout/test_layout.py holds this list, the C files under worker/ and the native
loader to each other. Optional: a machine without a C compiler installs quadfleet with the Python fallbacks (the
same output, slower).
"""
from setuptools import Extension, setup

FLAGS = ["-O2"]

EXT_MODULES = [
    # The prefilter's scanner (worker/html/evidence.py falls back to Python, several times slower).
    Extension("quadfleet.worker.html._scan",
              sources=["worker/html/_scan.c", "worker/html/_scan_bytes.c", "worker/html/_rawtext.c"],
              depends=["worker/html/_scan.h"], optional=True, extra_compile_args=FLAGS),
    # Finding JSON-LD script blocks in a decoded page (worker/html/blocks.py falls back to Python), and the walk of a
    # plain schema.org block to its triples (worker/extractors/jsonld/fused.py falls back to its Python walk).
    Extension("quadfleet.worker.html._blocks", sources=["worker/html/_blocks.c", "worker/html/_blocks_walk.c"],
              depends=["worker/html/_blocks.h"], optional=True, extra_compile_args=FLAGS),
    # N-Quads lines of terms a page's serializer has already made (worker/rdf/nquads.py's Serializer.line answers
    # the rest).
    Extension("quadfleet.worker.html._nquads", sources=["worker/html/_nquads.c", "worker/html/_nquads_collect.c"],
              depends=["worker/html/_nquads.h"], optional=True, extra_compile_args=FLAGS),
    # gzip members of a WARC inflated whole by libdeflate, opened at run time (worker/archive/gzip_members.py; the
    # reader falls back to FastWARC's inflate).
    Extension("quadfleet.worker.archive._inflate",
              sources=["worker/archive/_inflate.c", "worker/archive/_inflate_fields.c"],
              depends=["worker/archive/_inflate.h"], optional=True, extra_compile_args=FLAGS, libraries=["dl"]),
    # The quality check's pass over a page's lines (worker/quality/check.py's check_lines runs its Python loop over
    # every line without it).
    Extension("quadfleet.worker.quality._check", sources=["worker/quality/_check.c"], optional=True,
              extra_compile_args=FLAGS),
]

if __name__ == "__main__":   # (setuptools runs this file as __main__; the layout test imports it for the list)
    setup(ext_modules=EXT_MODULES)
