"""The front door for AI agents: an MCP server (`indexer mcp`) over the library, beside
`serve` (people and scripts over HTTP)."""
