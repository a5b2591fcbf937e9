from .base import Extractor
EXTRACTOR = Extractor(id="html-microdata", needles=(b"itemscope",), extract=lambda page: iter(()))
