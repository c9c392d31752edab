"""ctxlint: design-rule linter for runtime-context serving codebases."""

__version__ = "0.1.0"
