"""Per-account stacks built from one declarative topology."""
