"""AWS Bedrock's ConverseStream API (POST /model/{modelId}/converse-stream) in its streaming
wire format: binary `application/vnd.amazon.eventstream` messages.

Each message is a 12-byte prelude (total length, headers length, their CRC32), string
headers (`:event-type`, `:content-type`, `:message-type`), a JSON payload and the CRC32 of
all that. A message streams `messageStart`, then per block: a thinking block's
`reasoningContent` text deltas and its signature (or one the emulator makes) as a last
delta; a text block's text deltas; a tool_use block's `contentBlockStart` (its `toolUseId`
and name) and its input as `toolUse` fragments of compact JSON; each block ends with
`contentBlockStop`. Then `messageStop` with the stop reason, then `metadata` (usage and
metrics), as the service sends them. Payloads carry the `p` padding member the service adds.

A scripted stream error is an exception message (`:message-type exception`, its
`:exception-type` the camel-case name of a ConverseStream output member, such as
`throttlingException`), then the end; the stream error type `bad_crc` sends instead an event
whose message CRC is wrong. A non-2xx answer is `{"message"}` with the exception's name in
the `x-amzn-errortype` header. Credentials are checked for presence and shape: a Bedrock
API key (`authorization: Bearer`), or a SigV4 authorization for service `bedrock` whose
signed headers include `host` and `x-amz-date` (and `x-amz-security-token` when sent).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import zlib
from collections.abc import Mapping
from typing import Any

from .call import Call, Rejection
from .pieces import dump_json, split_fixed

NAME = "bedrock"
PATH_PATTERN = re.compile(r"^/model/[^/]+/converse-stream$")
REQUEST_ID_HEADER = "x-amzn-requestid"
CONTENT_TYPE = "application/vnd.amazon.eventstream"
DEFAULT_MODEL = "bedrock-emulator"
END: list[bytes] = []  # the stream ends with its last message

# panto's and the other providers' error types as Bedrock's exceptions, with their statuses.
_EXCEPTIONS = {
    "rate_limit_error": ("ThrottlingException", 429),
    "overloaded_error": ("ServiceUnavailableException", 503),
    "invalid_request_error": ("ValidationException", 400),
    "authentication_error": ("UnrecognizedClientException", 403),
    "permission_error": ("AccessDeniedException", 403),
    "not_found_error": ("ResourceNotFoundException", 404),
    "api_error": ("InternalServerException", 500),
    "server_error": ("InternalServerException", 500),
}
_STATUSES = {name: status for name, status in _EXCEPTIONS.values()} | {
    "ModelTimeoutException": 408, "ModelErrorException": 424, "ModelNotReadyException": 429,
    "MissingAuthenticationTokenException": 403, "IncompleteSignatureException": 403,
}

_STOP = {"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens",
         "stop_sequence": "stop_sequence", "content_filter": "content_filtered",
         "refusal": "guardrail_intervened"}

_SIGV4 = re.compile(r"^AWS4-HMAC-SHA256 Credential=(?P<key>[A-Z0-9]+)/(?P<date>\d{8})/"
                    r"(?P<region>[a-z0-9-]+)/bedrock/aws4_request, "
                    r"SignedHeaders=(?P<signed>[a-z0-9-]+(?:;[a-z0-9-]+)*), "
                    r"Signature=[0-9a-f]{64}$")
_AMZ_DATE = re.compile(r"^\d{8}T\d{6}Z$")

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"


def matches(path: str) -> bool:
    """Whether `path` is this API's streaming endpoint (the model is in the path)."""
    return PATH_PATTERN.match(path) is not None


def error_type_for(status: int) -> str:
    """The exception this API gives for an HTTP status the emulator answers by itself."""
    for name, code in _STATUSES.items():
        if code == status:
            return name
    return "ValidationException" if 400 <= status < 500 else "InternalServerException"


def exception_name(type_: str) -> str:
    """A scripted error type (an exception's name, or another provider's type name)."""
    return _EXCEPTIONS[type_][0] if type_ in _EXCEPTIONS else type_


def error_headers(type_: str) -> dict[str, str]:
    """The header naming the exception of a non-2xx answer."""
    return {"x-amzn-errortype": f"{exception_name(type_)}:http://internal.amazon.com/coral/"
                                "com.amazon.bedrock/"}


def error_body(type_: str, message: str, request_id: str, code: str | None = None,
               param: str | None = None) -> bytes:
    """The JSON body of a non-2xx answer: `{"message"}` (the name is in error_headers)."""
    return _json({"message": message})


def stream_error(type_: str, message: str, code: str | None = None) -> list[bytes]:
    """An exception message (or, for `bad_crc`, an event whose CRC is wrong); then the end."""
    if type_ == "bad_crc":
        broken = bytearray(_event("contentBlockDelta", {"contentBlockIndex": 0,
                                                       "delta": {"text": message}}))
        broken[-1] ^= 0xFF
        return [bytes(broken)]
    name = exception_name(type_)
    exception = name[:1].lower() + name[1:]
    return [frame([(":exception-type", exception), (":content-type", "application/json"),
                   (":message-type", "exception")], _json({"message": message}))]


_CACHE_TTLS = ("5m", "1h")
MAX_CACHE_POINTS = 4


def _check_cache_points(body: dict[str, Any]) -> Rejection | None:
    """cachePoint blocks as Converse takes them: `{"type": "default"[, "ttl"]}`, at most 4
    in a request (tools, system and messages together), their ttls never longer than an
    earlier point's (tools, then system, then messages)."""
    def listed(value: Any) -> list[Any]:
        return value if isinstance(value, list) else []

    tool_config = body.get("toolConfig")
    places = (listed(tool_config.get("tools")) if isinstance(tool_config, dict) else []) \
        + listed(body.get("system")) \
        + [b for m in listed(body.get("messages")) if isinstance(m, dict) for b in listed(m.get("content"))]
    points = [b["cachePoint"] for b in places if isinstance(b, dict) and "cachePoint" in b]
    for point in points:
        if not isinstance(point, dict) or point.get("type") != "default" or \
                point.get("ttl", "5m") not in _CACHE_TTLS or set(point) - {"type", "ttl"}:
            return _invalid("1 validation error detected: Value at 'cachePoint' failed to "
                            "satisfy constraint: type must be 'default' and ttl one of 5m, 1h")
    if len(points) > MAX_CACHE_POINTS:
        return _invalid(f"A maximum of {MAX_CACHE_POINTS} cache points may be provided. "
                        f"Found {len(points)}.")
    ttls = [_CACHE_TTLS.index(p.get("ttl", "5m")) for p in points]
    if any(later > earlier for earlier, later in zip(ttls, ttls[1:])):
        return _invalid("A cache point's ttl must not be longer than an earlier one's.")
    return None


_DOCUMENT_NAME = re.compile(r"^[A-Za-z0-9\-()\[\]]+( [A-Za-z0-9\-()\[\]]+)*$")


def _documents(blocks: Any) -> list[dict[str, Any]]:
    """The document blocks of a content list, those of its toolResults included."""
    out: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and isinstance(block.get("document"), dict):
            out.append(block["document"])
        elif isinstance(block, dict) and isinstance(block.get("toolResult"), dict):
            out += _documents(block["toolResult"].get("content"))
    return out


def _check_document_names(messages: list[Any]) -> Rejection | None:
    """A document's name: letters, digits, hyphens, parentheses, square brackets and single
    spaces between them, at most 200 characters."""
    for message in messages:
        for document in _documents(message.get("content")):
            name = document.get("name")
            if not isinstance(name, str) or len(name) > 200 or not _DOCUMENT_NAME.match(name):
                return _invalid("The document file name can only contain alphanumeric characters, whitespace "
                                "characters, hyphens, parentheses, and square brackets. The name can't contain "
                                "more than one consecutive whitespace character.")
    return None


def _check_output_config(body: dict[str, Any]) -> Rejection | None:
    """outputConfig.textFormat as Converse takes it: type json_schema, and the schema a
    string holding a JSON object schema."""
    config = body.get("outputConfig")
    if config is None:
        return None
    text_format = config.get("textFormat") if isinstance(config, dict) else None
    if text_format is None:
        return None
    definition = ((text_format.get("structure") or {}).get("jsonSchema") or {}) if isinstance(text_format, dict) else {}
    schema = definition.get("schema") if isinstance(definition, dict) else None
    if not isinstance(text_format, dict) or text_format.get("type") != "json_schema" or not isinstance(schema, str):
        return _invalid("1 validation error detected: Value at 'outputConfig.textFormat' failed to satisfy "
                        "constraint: type must be json_schema and structure.jsonSchema.schema a string")
    try:
        parsed = json.loads(schema)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return _invalid("The provided JSON schema in outputConfig is not valid JSON.")
    return None


def check_request_at(path: str, headers: Mapping[str, str], body: Any,
                     require_api_key: bool) -> Rejection | None:
    """Refuses what the service refuses, in the same order: credentials, then the body."""
    if require_api_key:
        rejection = _check_credentials(headers)
        if rejection is not None:
            return rejection
    if not isinstance(body, dict):
        return _invalid("Malformed input request, please reformat your input and try again.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return _invalid("The model returned the following errors: messages: "
                        "at least one message is required")
    for i, message in enumerate(messages):
        if (not isinstance(message, dict) or message.get("role") not in ("user", "assistant")
                or not isinstance(message.get("content"), list) or not message["content"]):
            return _invalid(f"1 validation error detected: Value at 'messages.{i + 1}."
                            "member.content' failed to satisfy constraint: Member must not "
                            "be null or empty")
    rejection = _check_cache_points(body) or _check_output_config(body) or _check_document_names(messages)
    if rejection is not None:
        return rejection
    if messages[0]["role"] != "user":
        return _invalid("A conversation must start with a user message. Try again with a "
                        "conversation that starts with a user message.")
    for i in range(1, len(messages)):
        if messages[i]["role"] == messages[i - 1]["role"]:
            return _invalid("A conversation must alternate between user and assistant roles. "
                            "Make sure the conversation alternates between user and "
                            "assistant roles and try again.")
        uses = _ids(messages[i - 1], "toolUse") if messages[i]["role"] == "user" else []
        results = _ids(messages[i], "toolResult")
        if len(results) > len(uses):
            return _invalid(f"The number of toolResult blocks at messages.{i}.content exceeds "
                            "the number of toolUse blocks of previous turn.")
        if set(results) != set(uses):
            return _invalid(f"Expected toolResult blocks at messages.{i}.content for the "
                            "following Ids: " + ", ".join(sorted(set(uses) - set(results))))
    return None


def _check_credentials(headers: Mapping[str, str]) -> Rejection | None:
    auth = headers.get("authorization", "")
    if auth.startswith("Bearer "):
        return None if auth[7:].strip() else Rejection(
            403, "UnrecognizedClientException", "Invalid API Key format: Must start with "
                                                "pre-defined prefix")
    if not auth:
        return Rejection(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
    m = _SIGV4.match(auth)
    date = headers.get("x-amz-date", "")
    if m is None or not _AMZ_DATE.match(date) or not date.startswith(m["date"]):
        return Rejection(403, "IncompleteSignatureException",
                         "Authorization header requires 'Credential', 'Signature' and "
                         "'SignedHeaders' parameters, and an x-amz-date header of the "
                         "credential's date.")
    signed = m["signed"].split(";")
    needed = ["host", "x-amz-date"] + (["x-amz-security-token"]
                                       if "x-amz-security-token" in headers else [])
    if signed != sorted(signed) or any(name not in signed for name in needed):
        return Rejection(403, "InvalidSignatureException",
                         "The request signature we calculated does not match the signature "
                         "you provided.")
    return None


def _ids(message: dict[str, Any], kind: str) -> list[str]:
    key = "toolUseId"
    return [b[kind].get(key, "") for b in message["content"]
            if isinstance(b, dict) and isinstance(b.get(kind), dict)]


def _invalid(message: str) -> Rejection:
    return Rejection(400, "ValidationException", message)


def render(message: dict[str, Any], call: Call) -> list[bytes]:
    """The event-stream messages of a scripted message, one bytes object per message."""
    out = [_event("messageStart", {"role": "assistant"})]
    index = 0
    for block in message["content"]:
        if block["type"] == "thinking":
            for d in block["deltas"] or [block["thinking"]]:
                out.append(_delta(index, {"reasoningContent": {"text": d}}))
            signature = block["signature"] or _made(call, index)
            out.append(_delta(index, {"reasoningContent": {"signature": signature}}))
        elif block["type"] == "text":
            for d in block["deltas"]:
                out.append(_delta(index, {"text": d}))
        elif block["type"] == "tool_use":
            tool_id = block["id"] or f"tooluse_emu{call.number:04d}_{index}"
            out.append(_event("contentBlockStart", {
                "contentBlockIndex": index,
                "start": {"toolUse": {"toolUseId": tool_id, "name": block["name"]}}}))
            deltas = block["deltas"]
            if deltas is None:
                deltas = split_fixed(dump_json(block["input"], compact=True))
            for d in deltas:
                out.append(_delta(index, {"toolUse": {"input": d}}))
        else:
            continue  # server blocks are Anthropic's: Bedrock's stream has none
        out.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    out.append(_event("messageStop", {"stopReason": _STOP.get(message["stop_reason"],
                                                               message["stop_reason"])}))
    out.append(_event("metadata", {"usage": _usage(message["usage"]),
                                   "metrics": {"latencyMs": 100 + call.number}}))
    return out


def _usage(u: dict[str, int]) -> dict[str, int]:
    """inputTokens counts neither cache reads nor writes; totalTokens counts all."""
    usage = {"inputTokens": u["input_tokens"], "outputTokens": u["output_tokens"],
             "totalTokens": u["input_tokens"] + u["output_tokens"] + u["cache_read_tokens"]
             + u["cache_write_tokens"]}
    if u["cache_read_tokens"]:
        usage["cacheReadInputTokens"] = u["cache_read_tokens"]
    if u["cache_write_tokens"]:
        usage["cacheWriteInputTokens"] = u["cache_write_tokens"]
    return usage


def _made(call: Call, index: int) -> str:
    """A reasoning signature the emulator makes, the same each time the scenario runs."""
    digest = hashlib.sha256(f"reasoning:{call.number}:{index}".encode()).digest()
    return base64.b64encode(digest).decode()


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return _event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})


def _event(event_type: str, payload: dict[str, Any]) -> bytes:
    padded = dict(payload, p=_PADDING[: 1 + len(event_type) % 20])
    return frame([(":event-type", event_type), (":content-type", "application/json"),
                  (":message-type", "event")], _json(padded))


def frame(headers: list[tuple[str, str]], payload: bytes) -> bytes:
    """One event-stream message: string headers (type 7) and the payload, with its CRCs."""
    raw = b"".join(bytes([len(name)]) + name.encode() + b"\x07"
                   + struct.pack(">H", len(value.encode())) + value.encode()
                   for name, value in headers)
    prelude = struct.pack(">II", 12 + len(raw) + len(payload) + 4, len(raw))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
