"""What agent code holds while it works: tool calls, terminals, processes, edits, permission.

Handles get the session's channel (:class:`~acpio._session.channel.SessionChannel`),
never the update path or the turn runner behind it, and never import the
:class:`~acpio.Session` facade above them.
"""
