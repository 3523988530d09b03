"""The agent side on top: :class:`~acpio.Agent`, the :class:`~acpio.Session` facade,
``serve``/``run``, and the server that speaks ACP (the method tables of the wire
versions in ``acpio._wire``).
"""
