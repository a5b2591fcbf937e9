"""quadfleet inside other data frameworks: one module per framework, each a thin idiom (a pipeline step, a job)
over ``quadfleet.extract``.

Why a package of its own that imports nothing: each module imports its framework, which most users do not have;
``import quadfleet.integrations`` costs nothing, and ``import quadfleet.integrations.datatrove`` without datatrove
says which extra to install.
"""
