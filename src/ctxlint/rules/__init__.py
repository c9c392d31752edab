"""One module per rule; each defines RULE."""
