"""The importers of ``vaultmem import --from``."""
