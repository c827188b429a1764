"""The experiments' pipelines: each `run(config, workdir)` strings library
pieces together; the modules one level up are their thin command-line mains."""
