"""The core of one session: its turn state machine and its update path.

:mod:`~acpio._session.turn_machine` owns the turn lifecycle (a transition function
without I/O), :mod:`~acpio._session.turn` drives it, :mod:`~acpio._session.updates`
the update path, :mod:`~acpio._session.encoding` what it asks of the connection's
wire version (each version, in ``acpio._wire``, gives its own; the envelope and
splices in :mod:`~acpio._session.framing`).
"""
