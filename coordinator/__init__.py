"""What runs inputs and gathers their results: a local process pool (``local``), the work queue (``queue``),
the spot fleet (``fleet``), URL-index selection (``index``), crawl statistics and report (``report``) and the
class datasets (``subsets``). It may import the worker; the worker never imports it."""
