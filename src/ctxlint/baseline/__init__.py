"""baseline."""
