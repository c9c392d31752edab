"""Errors the CLI turns into a one-line message and exit code 2."""


class CtxlintError(Exception):
    """A usage, configuration or tool error: reported without a traceback."""


class ConfigError(CtxlintError):
    pass


class DerivationError(CtxlintError):
    """A derived set came out empty: a derivation that finds nothing is a failure."""
