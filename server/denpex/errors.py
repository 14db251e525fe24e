"""Errors that end a command with exit code 2 and one clear line on stderr."""


class InputError(Exception):
    """Bad usage or unreadable input: reported as one line, exit code 2."""
