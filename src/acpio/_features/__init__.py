"""Session features beside the turn: config options, slash commands, elicitation, MCP transports."""
