"""html-rdfa: RDFa 1.1 Core with the HTML+RDFa host-language rules."""
