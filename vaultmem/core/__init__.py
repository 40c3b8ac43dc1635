"""The vault's own vocabulary: notes, links, types, files, locks, config, registry (imports nothing above it)."""
