"""The base of every user-facing error: the command line prints it in one line and exits 2."""


class UsageError(ValueError):
    """A mistake the user can fix (an argument, a config, an input, a missing extra), named in its message."""
