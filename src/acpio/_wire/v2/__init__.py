"""The current wire version: its one object, :data:`~acpio._wire.v2.wire.V2_WIRE`."""

from .wire import V2_WIRE

__all__ = ["V2_WIRE"]
