"""From what the user names to HTML pages: inputs and their ids, opening a stream, WARC/ARC records (warcio and
FastWARC), HTTP bodies, byte ranges."""
