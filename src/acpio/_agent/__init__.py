"""The agent side on top: :class:`~acpio.Agent`, the :class:`~acpio.Session` facade,
``serve``/``run``, and the v2 and v1 method tables.
"""
