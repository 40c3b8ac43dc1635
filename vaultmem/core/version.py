"""vaultmem's version (one place; the package's ``__version__`` and the service protocol read it)."""

VERSION = "0.1.0"
