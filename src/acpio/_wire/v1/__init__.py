"""ACP v1: the one package that knows it, and its one object, :data:`~acpio._wire.v1.wire.V1_WIRE`.

Loaded with the first v1 client (``initialize`` with ``protocolVersion: 1``),
never by ``import acpio``. Its modules: the method table (``methods.py``), the
encoding and what a v1 client is shown (``encoding.py``, ``projection.py``), the
client's terminals and files (``client_services.py``), and the vendored v1 schema
as acpio reads it (``lenient.py``; its shapes in ``shapes.py``, its value sets in
``values.py``).
"""

from .wire import V1_WIRE

__all__ = ["V1_WIRE"]
