"""The JSON-RPC 2.0 layer: byte streams, line framing, envelopes, requests both ways.

Knows methods as strings and params as raw JSON; imports no ACP type and
nothing of the session layer. Public home: :mod:`acpio.rpc`.
"""
