"""One page's bytes to what extractors read: charset and text, the prefilter's scan (evidence), JSON-LD blocks, the
DOM, the head-only parse, the native accelerators."""
