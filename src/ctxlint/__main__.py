"""`python -m ctxlint`: the same entry point as the `ctxlint` command."""

import sys

from ctxlint.cli import main

sys.exit(main())
