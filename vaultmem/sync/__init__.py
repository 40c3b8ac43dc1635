"""Git: commit, fetch, merge and push a vault."""
