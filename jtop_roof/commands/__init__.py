"""The command line: one module per command and the table that names them."""
