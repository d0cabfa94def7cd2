"""The one exception the command line turns into a one-line message."""


class UserError(Exception):
    """Something the user can fix: bad input, a missing file, a failed step.

    The message says what went wrong, with which input, and what to do.
    """
