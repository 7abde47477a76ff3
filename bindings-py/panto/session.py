"""Session: an agent whose conversation lives in a file, and the sessions of a directory.

The session store is the library's (include/panto.h, "Sessions"; docs/conversations.md): one
append-only JSONL file per session, each change fsync'ed before the call that made it
returns, one writer at a time. This module gives it Python's idioms.
"""

from __future__ import annotations

import ctypes

from . import _native
from .agent import Agent
from .errors import from_native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from dataclasses import dataclass
    from datetime import datetime
    from typing import Any, Dict, List, Optional, Union

    from typing_extensions import Self

    from .agent import ToolsArg

    PathArg = Union[str, "os.PathLike[str]"]
    import os
else:
    from ._frozen import dataclass

__all__ = ["Session", "SessionInfo", "SessionSummary", "SessionParent"]

SESSION_MODES = ("open", "resume", "create")


@dataclass(frozen=True)
class SessionInfo:
    """The session an agent writes to: its `id`, its file's `path`, whether it existed when
    the agent opened it (`resumed`), and the bytes of a torn last line (a crash mid-write)
    cut off its file then (`torn_bytes`, 0 mostly)."""

    id: str
    path: str
    resumed: bool
    torn_bytes: int


@dataclass(frozen=True)
class SessionParent:
    """The session a fork was made from, and the messages it took from it."""

    id: str
    message_count: int


@dataclass(frozen=True)
class SessionSummary:
    """A session of a directory, as `Session.list()` finds it. `first_user_text` is the first
    text of the first user message ("" if none); `parent` is set for a fork."""

    id: str
    path: str
    created: datetime
    updated: datetime
    message_count: int
    first_user_text: str
    cwd: str
    parent: Optional[SessionParent]


class Session(Agent):
    """An agent whose conversation is kept in a session file, resumed when it is opened
    again. The constructor takes the session's `id` (a new one is made when None), `dir` (its
    directory; default `$XDG_DATA_HOME/panto/sessions`), `mode` ("open": resume it if it
    exists, else create it; "resume": it must exist, else `panto.NoSuchSessionError`;
    "create": it must not, else `panto.SessionError`) and `fsync` (default True), then the
    agent's arguments:

        with panto.Session("work", dir="sessions", provider="anthropic",
                           model="claude-sonnet-4-5") as session:
            if session.info.resumed:
                print(f"{session.message_count} messages so far")
            for text in session.run("Go on").text():
                print(text, end="")

        for s in panto.Session.list("sessions"):
            print(s.id, s.updated, s.message_count, s.first_user_text)

    A session has one writer: opening it while another agent (of any process) has it open
    raises `panto.SessionLockedError`; leaving the `with` (or `close()`) lets it go. API keys
    are never written to the file. `Session.from_config(config)` opens one from the
    configuration object of `panto_agent_new`, whose "session" key says which."""

    def __init__(
        self,
        id: Optional[str] = None,
        *,
        dir: Optional[PathArg] = None,
        mode: str = "open",
        fsync: bool = True,
        provider: str,
        model: str,
        tools: Optional[ToolsArg] = None,
        **agent_args: Any,
    ) -> None:
        import os

        from .config import config_value

        if mode not in SESSION_MODES:
            raise ValueError(f"mode must be one of {', '.join(SESSION_MODES)}, not {mode!r}")
        session: Dict[str, Any] = {"mode": mode, "fsync": bool(fsync)}
        if id is not None:
            session["id"] = id
        if dir is not None:
            session["dir"] = os.fspath(dir)
        config: Dict[str, Any] = {"provider": provider, "model": model, "session": session}
        approval = agent_args.pop("approval", None)
        for key, value in agent_args.items():
            if value is not None:
                config[key] = config_value(key, value)
        self._open(config, tools, approval)

    @classmethod
    def resume(cls, id: str, **kwargs: Any) -> Self:
        """Opens the session `id`, which must exist (`panto.NoSuchSessionError`, also a
        FileNotFoundError, otherwise); the other arguments are the constructor's."""
        return cls(id, mode="resume", **kwargs)

    @property
    def info(self) -> SessionInfo:
        """The session the agent writes to now (after `fork()`, the fork)."""
        info = _native.PantoSessionInfo()
        with self._calls:  # the strings live until the next call on the agent
            ptr = self._live()
            rc = self._lib.agent_session(ptr, ctypes.byref(info))
            if rc < 0:
                raise self._error(ptr, rc)
            return SessionInfo(
                id=_native.copy_string(info.id),
                path=_native.copy_string(info.path),
                resumed=bool(info.resumed),
                torn_bytes=info.torn_bytes,
            )

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def path(self) -> str:
        return self.info.path

    def fork(self, message_count: Optional[int] = None, id: Optional[str] = None) -> SessionInfo:
        """Branches the conversation: a new session (`id`, or a new id when None) holding the
        first `message_count` messages (default: all), whose file names this one as its
        parent. The agent goes on in the fork (its conversation truncated to
        `message_count`); this session's file stays as it is. Returns the fork's info.

        Raises `panto.SessionError` when `id` is taken or invalid, and what `truncate()`
        raises; nothing changes then."""
        raw = _native.utf8(id or "")
        with self._calls:
            ptr = self._live()
            count = self.message_count if message_count is None else message_count
            if not isinstance(count, int) or isinstance(count, bool):
                raise TypeError(f"message_count must be an int, not {type(count).__name__}")
            if count < 0:
                from .errors import InvalidArgumentError

                raise InvalidArgumentError(f"message_count must not be negative, got {count}")
            rc = self._lib.agent_fork_session(ptr, count, _native.string(raw))
            if rc < 0:
                raise self._error(ptr, rc)
            return self.info

    @staticmethod
    def list(dir: Optional[PathArg] = None) -> List[SessionSummary]:
        """The sessions of `dir` (default: the default directory), newest first. A missing
        directory has none; a file that is not a session is left out."""
        import json
        import os

        from .errors import LibraryNotFound

        lib = _native.LIB
        if lib is None:
            raise LibraryNotFound(_native.LOOKED_IN)
        raw = _native.utf8(os.fspath(dir)) if dir is not None else b""
        handle = _native.SessionListPtr()
        rc = lib.session_list(_native.string(raw) if dir is not None else _native.PantoString(), ctypes.byref(handle))
        try:
            if rc < 0:
                if not handle:
                    from .errors import error_class

                    raise error_class(rc)(lib.status_name(rc), status=rc, code=lib.status_name(rc))
                detail = _native.PantoError()
                lib.session_list_error(handle, ctypes.byref(detail))
                raise from_native(lib, detail, rc)
            s = _native.PantoString()
            rc = lib.session_list_json(handle, ctypes.byref(s))
            if rc < 0:
                from .errors import error_class

                raise error_class(rc)(lib.status_name(rc), status=rc, code=lib.status_name(rc))
            entries = json.loads(_native.copy_string(s))
        finally:
            lib.session_list_free(handle)
        return [_summary(e) for e in entries]


def _time(text: str) -> datetime:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _summary(entry: Mapping[str, Any]) -> SessionSummary:
    parent = entry.get("parent")
    return SessionSummary(
        id=entry["id"],
        path=entry["path"],
        created=_time(entry["created"]),
        updated=_time(entry["updated"]),
        message_count=entry["message_count"],
        first_user_text=entry["first_user_text"],
        cwd=entry["cwd"],
        parent=SessionParent(parent["id"], parent["message_count"]) if parent else None,
    )
