"""Agent integration: set-ups, hooks, transcripts, the MCP server."""
