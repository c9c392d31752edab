"""`ctxlint fix`: codemods that do the migration sweep the rules report.

A fix run checks the program, rewrites each fixable finding's node through
LibCST (everything outside the rewritten expressions and imports is left as it
was), checks the whole program again and rolls back, per file, a rewrite that
leaves its finding or adds one. What to write comes from the derived
vocabulary, never from a list: see `targets` for where a field is read from.

This package is what a fixer is written with; each rule's fixer lives with the
rule (rules/<rule>/fix.py, named by Rule.fixers), and the run that checks,
plans and checks again is ctxlint/fix_run.py.
"""
