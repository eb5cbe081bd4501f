"""The one kind of error a user can fix: a bad flag, file, config or address. Every layer raises
its own subclass; the command line catches this base once and prints one line (exit 2)."""


class UserError(ValueError):
    """A problem with what the user asked for; the message is one line, shown as it is."""
