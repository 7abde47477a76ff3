"""Agent: a conversation with one model of one provider."""

from __future__ import annotations

import ctypes
import json
from types import TracebackType
from typing import Any, Dict, List, Mapping, Optional, Set, Type

from . import _native
from .errors import Error, InvalidArgumentError, LibraryNotFound, error_class, from_native
from .stream import Stream, StreamHandle

__all__ = ["Agent"]


class Agent:
    """An agent: a provider, a model and the conversation so far.

    `run(text)` appends a user message and returns the `Stream` of the turn. An agent runs one
    turn at a time: `run` while a stream is unfinished raises `panto.BusyError`.

        with panto.Agent(provider="anthropic", model="claude-sonnet-4-5") as agent:
            with agent.run("Hello") as stream:
                for text in stream.text():
                    print(text, end="")

    `base_url` defaults to the provider's API, `api_key` to $ANTHROPIC_API_KEY or
    $OPENAI_API_KEY, `max_tokens` to 4096. A configuration the library refuses raises
    `panto.ConfigError`; a missing shared library raises `panto.LibraryNotFound`.

    Not thread-safe: use an agent and its streams from one thread at a time.
    """

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        system: Optional[str] = None,
        max_tokens: Optional[int] = None,
    ) -> None:
        config: Dict[str, Any] = {"provider": provider, "model": model}
        for key, value in (
            ("base_url", base_url),
            ("api_key", api_key),
            ("system", system),
            ("max_tokens", max_tokens),
        ):
            if value is not None:
                config[key] = value
        self._open(config)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Agent":
        """An agent from the configuration object of `panto_agent_new`, passed on as is
        (keys this package does not know reach the library, which judges them)."""
        agent = cls.__new__(cls)
        agent._open(dict(config))
        return agent

    def _open(self, config: Dict[str, Any]) -> None:
        self._ptr: Optional[Any] = None  # set first: __del__ may run if this fails
        self._streams: Set[StreamHandle] = set()
        lib = _native.LIB
        if lib is None:
            raise LibraryNotFound(_native.LOOKED_IN)
        self._lib: _native.Library = lib
        raw = json.dumps(config).encode("utf-8")
        out = _native.AgentPtr()
        rc = lib.agent_new(raw, ctypes.byref(out))
        if rc < 0:
            if out:  # PANTO_ERR_CONFIG: the agent holds the reason
                try:
                    raise self._error(out, rc)
                finally:
                    lib.agent_free(out)
            raise error_class(rc)(lib.status_name(rc), status=rc, code=lib.status_name(rc))
        self._ptr = out

    # ---- turns -------------------------------------------------------------------------

    def run(self, text: str) -> Stream:
        """Appends `text` to the conversation as a user message and returns the turn's
        stream. Nothing is sent before the first `next()` on the stream."""
        ptr = self._live()
        if not isinstance(text, str):
            raise TypeError(f"run() needs a str, not {type(text).__name__}")
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidArgumentError(f"the text is not valid Unicode: {e}") from None
        if b"\0" in raw:
            raise InvalidArgumentError("the text contains a NUL character")
        out = _native.StreamPtr()
        rc = self._lib.agent_run(ptr, raw, ctypes.byref(out))
        if rc < 0:
            raise self._error(ptr, rc)
        handle = StreamHandle(out)
        self._streams.add(handle)
        return Stream(self, handle)

    @property
    def conversation(self) -> List[Dict[str, Any]]:
        """The conversation so far: a list of {"role": ..., "content": [blocks]} messages."""
        ptr = self._live()
        s = _native.PantoString()
        rc = self._lib.agent_conversation(ptr, ctypes.byref(s))
        if rc < 0:
            raise self._error(ptr, rc)
        result: List[Dict[str, Any]] = json.loads(_native.copy_string(s))
        return result

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Frees the agent, after freeing any stream of it still open (those streams then
        act as closed). Safe to call more than once."""
        ptr = self._ptr
        if ptr is None:
            return
        self._ptr = None
        lib = self._lib
        for handle in self._streams:
            stream_ptr = handle.ptr
            if stream_ptr is not None:
                handle.ptr = None
                lib.stream_free(stream_ptr)
        self._streams.clear()
        lib.agent_free(ptr)

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def __enter__(self) -> "Agent":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: never raise from a finalizer
            pass

    def __repr__(self) -> str:
        return f"<panto.Agent {'closed' if self._ptr is None else 'open'}>"

    # ---- internals ---------------------------------------------------------------------

    def _live(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise InvalidArgumentError("the agent is closed")
        return ptr

    def _error(self, ptr: Any, rc: int) -> Error:
        detail = _native.PantoError()
        self._lib.agent_error(ptr, ctypes.byref(detail))
        return from_native(self._lib, detail, rc)

    def _forget_stream(self, handle: StreamHandle) -> None:
        self._streams.discard(handle)
