"""CLI commands for agent integration (`vaultmem mcp`, `vaultmem setup`), registered on the app."""
