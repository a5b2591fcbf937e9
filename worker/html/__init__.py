"""One page's bytes to what extractors read: charset and text, the prefilter's scan (evidence), JSON-LD blocks, the
DOM, the head-only parse; beside them their C modules (loaded by :mod:`quadfleet.worker.native`)."""
