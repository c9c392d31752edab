"""Errors the CLI turns into a one-line message and exit code 2."""

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """ " (did you mean 'X'?)" for the closest choice, or "" when none is close."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class CtxlintError(Exception):
    """A usage, configuration or tool error: reported without a traceback."""


class ConfigError(CtxlintError):
    pass


class DerivationError(CtxlintError):
    """A derived set came out empty: a derivation that finds nothing is a failure."""
