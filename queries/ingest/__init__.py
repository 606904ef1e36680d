"""Access logs in: log formats, tailing files, and the exactly-once ingest run."""
