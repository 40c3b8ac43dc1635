"""Adversarial tests: one module per class (see README.md)."""
