#!/usr/bin/env python3
"""Generates cases/error_{responses,gemini,bedrock}_*: each error answer the Responses, Gemini
and Bedrock APIs document, with the status they send it with, and the failure panto makes of
it in every language (issue 29's "each error type").

    .venv/bin/python tests/conformance/make_error_cases.py          # (re)write them
    .venv/bin/python tests/conformance/make_error_cases.py --check  # fail if stale

The code follows include/panto.h's table: by HTTP status (401 authentication, 403 permission,
404 not found, 400 invalid request, 429 rate limit, 529 overloaded, any other status server),
except where the provider's own error name says more (Bedrock's UnrecognizedClientException
is sent with 403 but is bad credentials: authentication). The error's type is the provider's
name for it (the `type` of OpenAI's body, Gemini's `status`, Bedrock's exception name). Retries
are off, so one request each; the failure is sticky (a second next() says the same). Edit
this script, not the folders.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate

HERE = Path(__file__).resolve().parent

CODE_BY_STATUS = {400: "invalid_request", 401: "authentication", 403: "permission", 404: "not_found",
                  429: "rate_limit", 529: "overloaded"}

# provider -> (model, path, [(status, the provider's error name, message, code if not by status)])
ERRORS: dict[str, tuple[str, str, list[tuple[int, str, str, str | None]]]] = {
    "openai-responses": ("gpt-test", "/v1/responses", [
        (400, "invalid_request_error", "Invalid 'input': empty.", None),
        (401, "invalid_request_error", "Incorrect API key provided.", None),
        (403, "invalid_request_error", "Project does not have access to model gpt-test.", None),
        (404, "invalid_request_error", "The model gpt-test does not exist.", None),
        (429, "rate_limit_error", "Rate limit reached for requests.", None),
        (500, "server_error", "The server had an error while processing your request.", None),
        (503, "server_error", "The engine is currently overloaded, please try again later.", None),
    ]),
    "gemini": ("gemini-test", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", [
        (400, "INVALID_ARGUMENT", "Request contains an invalid argument.", None),
        (403, "PERMISSION_DENIED", "Permission denied on resource project.", None),
        (404, "NOT_FOUND", "models/gemini-test is not found for API version v1beta.", None),
        (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", None),
        (500, "INTERNAL", "An internal error has occurred.", None),
        (503, "UNAVAILABLE", "The model is overloaded. Please try again later.", None),
        (504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.", None),
    ]),
    "bedrock": ("anthropic.claude-test-v1:0", "/model/anthropic.claude-test-v1%3A0/converse-stream", [
        (400, "ValidationException", "Malformed input request.", None),
        (403, "UnrecognizedClientException", "The security token included in the request is invalid.",
         "authentication"),
        (403, "AccessDeniedException", "You don't have access to the model with the specified model ID.", None),
        (404, "ResourceNotFoundException", "Could not resolve the foundation model.", None),
        (408, "ModelTimeoutException", "Model has timed out in processing the request.", None),
        (424, "ModelErrorException", "The model returned an error.", None),
        (429, "ThrottlingException", "Too many requests, please wait before trying again.", None),
        (500, "InternalServerException", "An internal server error occurred.", None),
        (503, "ServiceUnavailableException", "Service is unavailable. Try again later.", None),
    ]),
}
SHORT = {"openai-responses": "responses", "gemini": "gemini", "bedrock": "bedrock"}


def case(provider: str, model: str, path: str, status: int, name: str, message: str,
         code: str | None) -> tuple[Path, dict[str, str]]:
    code = code or CODE_BY_STATUS.get(status, "server")
    data: dict[str, Any] = {
        "description": f"{provider} answers HTTP {status} {name}: a {code} failure whose type is the "
                       "provider's name for the error and whose message is the API's; retries off, sticky.",
        "config": {"provider": provider, "model": model, "api_key": "test-key", "retry": {"max_retries": 0}},
        "turns": ["Hello"],
        "script": {"responses": [{"status": status, "error": {"type": name, "message": message}}]},
        "expect_requests": [{"method": "POST", "path": path}],
    }
    error = {"event": "error", "code": code, "http_status": status, "type": name, "message": message}
    folder = HERE / "cases" / f"error_{SHORT[provider]}_{status}_{name.lower()}"
    return folder, case_texts(data, [error, error])


def folders() -> dict[Path, dict[str, str]]:
    out: dict[Path, dict[str, str]] = {}
    for provider, (model, path, errors) in ERRORS.items():
        for status, name, message, code in errors:
            folder, files = case(provider, model, path, status, name, message, code)
            out[folder] = files
    return out


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_error_cases.py", folders))
