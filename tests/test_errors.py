"""The exception hierarchy and the JSON-RPC error codes each constructor puts on the wire."""

from __future__ import annotations

import copy
import pickle

import pytest

from acpio import _errors
from acpio._errors import (
    AcpError,
    ConnectionClosed,
    LocalProtocolError,
    RemoteProtocolError,
    RequestError,
)


def test_codes_are_the_json_rpc_and_acp_numbers() -> None:
    assert _errors.PARSE_ERROR == -32700
    assert _errors.INVALID_REQUEST == -32600
    assert _errors.METHOD_NOT_FOUND == -32601
    assert _errors.INVALID_PARAMS == -32602
    assert _errors.INTERNAL_ERROR == -32603
    assert _errors.REQUEST_CANCELLED == -32800
    assert _errors.AUTH_REQUIRED == -32000
    assert _errors.RESOURCE_NOT_FOUND == -32002
    assert _errors.UNSUPPORTED_PROTOCOL_VERSION == -32022


@pytest.mark.parametrize(
    ("error", "code", "message", "data"),
    [
        (RequestError.parse_error(), -32700, "Parse error", None),
        (RequestError.invalid_request(), -32600, "Invalid request", None),
        (
            RequestError.method_not_found("_x/y"),
            -32601,
            "Method not found: _x/y",
            {"method": "_x/y"},
        ),
        (
            RequestError.invalid_params("Expected `str`, got `int` - at `$.prompt[0].text`"),
            -32602,
            "Invalid params: Expected `str`, got `int` - at `$.prompt[0].text`",
            None,
        ),
        (RequestError.internal_error(), -32603, "Internal error", None),
        (RequestError.request_cancelled(), -32800, "Request cancelled", None),
        (RequestError.auth_required(), -32000, "Authentication required", None),
        (
            RequestError.session_not_found("sess_1"),
            -32002,
            "Session not found: sess_1",
            {"sessionId": "sess_1"},
        ),
        (
            RequestError.unsupported_protocol_version(3, [1, 2]),
            -32022,
            "Unsupported protocol version 3; this agent supports [1, 2]",
            {"requested": 3, "supported": [1, 2]},
        ),
    ],
)
def test_constructors_carry_code_message_and_data(
    error: RequestError, code: int, message: str, data: object
) -> None:
    assert (error.code, error.message, error.data) == (code, message, data)
    assert isinstance(error, RequestError)


def test_custom_message_and_data_are_kept() -> None:
    error = RequestError.internal_error("disk full", {"path": "/tmp"})
    assert (error.code, error.message, error.data) == (-32603, "disk full", {"path": "/tmp"})
    assert RequestError.invalid_request("no", [1]).data == [1]
    assert RequestError.parse_error("bad", "x").data == "x"


def test_str_and_repr_name_the_code() -> None:
    error = RequestError(-32099, "custom")
    assert str(error) == "custom (JSON-RPC error -32099)"
    assert repr(error) == "RequestError(code=-32099, message='custom')"
    assert error.args == ("custom",)


def test_hierarchy() -> None:
    for cls in (RequestError, ConnectionClosed, LocalProtocolError, RemoteProtocolError):
        assert issubclass(cls, AcpError)
    assert issubclass(AcpError, Exception)
    # Local protocol violations are bad arguments from the caller's point of view.
    assert issubclass(LocalProtocolError, ValueError)
    assert not issubclass(RemoteProtocolError, ValueError)
    with pytest.raises(AcpError):
        raise ConnectionClosed("gone")


def test_request_error_survives_pickle_and_copy() -> None:
    error = RequestError.session_not_found("sess_9")
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert type(clone) is RequestError
        assert (clone.code, clone.message, clone.data) == (error.code, error.message, error.data)
