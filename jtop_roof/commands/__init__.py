"""The command line: one module per command, each exposing ``COMMAND`` (``base.Command``); ``main``
lists them in one table, builds the parser from it and runs the one asked for."""
