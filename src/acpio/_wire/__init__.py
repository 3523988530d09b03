"""One package per wire version: what a connection is given once ``initialize`` chose it.

``wire.py`` says what a version gives (:class:`~acpio._wire.wire.Wire`: its method
table, its session encoding, who runs terminals); ``v2/`` and ``v1/`` each export
one such object. Only ``v1/`` knows ACP v1.
"""
