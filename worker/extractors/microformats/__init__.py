"""The ten classic microformats of Web Data Commons, as Apache Any23 mapped them: one module per format on a shared
class index and value rules."""
