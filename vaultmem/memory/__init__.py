"""Memory operations on one vault's state: write, lifecycle, aging, sessions, scope."""
