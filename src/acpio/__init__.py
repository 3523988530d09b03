"""acpio: the agent side of the Agent Client Protocol (draft v2), async and typed."""
