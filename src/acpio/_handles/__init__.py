"""What agent code holds while it works: tool calls, terminals, processes, edits, permission.

Handles get the session's collaborators (:class:`~acpio._session.parts.SessionParts`)
and never import the :class:`~acpio.Session` facade above them.
"""
