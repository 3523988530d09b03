"""The core of one session: its turn state machine and its update path.

:mod:`~acpio._session.turn_machine` owns the turn lifecycle (a transition function
without I/O), :mod:`~acpio._session.turn` drives it, :mod:`~acpio._session.updates`
the update path, :mod:`~acpio._session.encoding` how an update becomes lines for the
connection's protocol version (one object per version; the envelope and splices in
:mod:`~acpio._session.framing`, what a v1 client is shown in
:mod:`~acpio._session.v1_projection`).
"""
