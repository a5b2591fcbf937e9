"""Where an input's results go and how they appear all at once: keys, local and S3 stores, compression, scratch
space, the run manifest, class subsets and tables."""
