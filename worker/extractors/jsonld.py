from .base import Extractor
EXTRACTOR = Extractor(id="html-embedded-jsonld", needles=(b"ld+json",), extract=lambda page: iter(()), needs_tree=False)
