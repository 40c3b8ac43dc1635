"""One module per coding agent, each holding every fact vaultmem knows about it (``base.Adapter``);
``adapters.py`` is the registry."""
