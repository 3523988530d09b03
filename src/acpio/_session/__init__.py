"""The core of one session: its turn state machine and its update path.

:mod:`~acpio._session.turn` owns the turn state machine, :mod:`~acpio._session.updates`
the update path, :mod:`~acpio._session.framing` and :mod:`~acpio._session.v1_projection`
how an update becomes lines for the connection's protocol version.
"""
