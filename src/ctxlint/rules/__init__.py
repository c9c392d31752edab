"""One module (or package, when it has a fixer: fix.py beside it) per rule; each defines RULE."""
