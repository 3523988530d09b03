"""ACP's rules that every layer above applies: one home each.

Enum values (known or ``_``-prefixed), absolute paths, ids, content helpers,
what the client offers (:class:`~acpio._protocol.peer.Peer`), and the v1 shapes.
"""
