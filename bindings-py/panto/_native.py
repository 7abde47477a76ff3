"""The ctypes layer: loading the library and declaring its symbols (their types are in _abi.py).

Private: the public API is in agent.py, stream.py, events.py and errors.py. Nothing here
allocates per event; callers copy borrowed strings out with `copy_string` at once.
"""

from __future__ import annotations

import ctypes
import os
import sys

# The header's constants, structs, handles and signatures, generated from the library's Zig
# definitions (scripts/gen_abi.py): ABI_VERSION, OK, ERR_*, EVENT_*, BLOCK_*, STOP_*, PantoEvent,
# AgentPtr, SIGNATURES, ...
from . import _abi
from ._abi import *  # noqa: F401,F403
from ._abi import ABI_VERSION, BLOCK_NONE, BLOCK_REDACTED_THINKING, BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL_CALL, SIGNATURES, PantoString

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: it costs more than this package
    from typing import Any, Callable, Dict, List, Optional, Tuple

    #: A function of the library, its argument and result types declared (SIGNATURES).
    CFunction = Callable[..., Any]


def string(raw: bytes) -> PantoString:
    """A PantoString of the bytes of `raw`, which the caller keeps alive during the call."""
    return PantoString(ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p), len(raw))


def utf8(text: str) -> bytes:
    """`text` as the library takes it. Not judged here: a lone surrogate goes as the bytes
    it would be, which the library replaces (text) or refuses (identifiers, JSON)."""
    return text.encode("utf-8", "surrogatepass")


def tool_format(name: str) -> int:
    """The PantoToolFormat of a format's name ("anthropic", "openai", "panto")."""
    value = _abi.__dict__.get("TOOL_FORMAT_" + name.upper()) if name.isidentifier() else None
    if not isinstance(value, int) or name != name.lower():
        formats = ", ".join(repr(n[len("TOOL_FORMAT_"):].lower()) for n in _abi.__dict__ if n.startswith("TOOL_FORMAT_"))
        raise ValueError(f"unknown tool format {name!r} (use {formats})")
    return value


def copy_string(s: PantoString) -> str:
    """Copies a borrowed PantoString out of the library's memory."""
    n = s.len
    if not n:
        return ""
    return ctypes.string_at(s.ptr, n).decode("utf-8")


class Library:
    """The loaded shared library, its declared symbols and its cached enum names."""

    def __init__(self, path: str) -> None:
        self.path: str = path
        self.cdll: ctypes.CDLL = ctypes.CDLL(path)
        c = self.cdll
        # The version first: a library of another ABI may lack or change the other symbols.
        try:
            abi_version = c.panto_abi_version
        except AttributeError:
            raise ImportError(f"panto: {path} does not export panto_abi_version: it is not a panto library") from None
        abi_version.restype, abi_version.argtypes = SIGNATURES["panto_abi_version"]
        abi = abi_version()
        if abi != ABI_VERSION:
            raise AbiMismatch(
                f"panto: {path} has C ABI version {abi}, but this Python package was written for "
                f"ABI version {ABI_VERSION}; rebuild the library (`zig build`) or install the "
                f"panto package that matches it"
            )
        for name, (restype, argtypes) in SIGNATURES.items():
            try:
                fn = getattr(c, name)
            except AttributeError:
                raise ImportError(f"panto: {path} does not export {name}") from None
            fn.restype = restype
            fn.argtypes = argtypes
        self.version: str = c.panto_version().decode("utf-8")
        # Bound functions, looked up once.
        self.agent_new: CFunction = c.panto_agent_new
        self.agent_free: CFunction = c.panto_agent_free
        self.agent_error: CFunction = c.panto_agent_error
        self.agent_set_config: CFunction = c.panto_agent_set_config
        self.agent_settings: CFunction = c.panto_agent_settings
        self.agent_model_info: CFunction = c.panto_agent_model_info
        self.model_info: CFunction = c.panto_model_info
        self.agent_run: CFunction = c.panto_agent_run
        self.agent_conversation: CFunction = c.panto_agent_conversation
        self.agent_export: CFunction = c.panto_agent_export
        self.agent_import: CFunction = c.panto_agent_import
        self.agent_message_count: CFunction = c.panto_agent_message_count
        self.agent_spent: CFunction = c.panto_agent_spent
        self.agent_truncate: CFunction = c.panto_agent_truncate
        self.agent_rollback_turn: CFunction = c.panto_agent_rollback_turn
        self.agent_compact: CFunction = c.panto_agent_compact
        self.agent_compact_with: CFunction = c.panto_agent_compact_with
        self.agent_session: CFunction = c.panto_agent_session
        self.agent_fork_session: CFunction = c.panto_agent_fork_session
        self.session_list: CFunction = c.panto_session_list
        self.session_list_json: CFunction = c.panto_session_list_json
        self.session_list_error: CFunction = c.panto_session_list_error
        self.session_list_free: CFunction = c.panto_session_list_free
        self.agent_connections: CFunction = c.panto_agent_connections
        self.agent_mcp_count: CFunction = c.panto_agent_mcp_count
        self.agent_mcp_status: CFunction = c.panto_agent_mcp_status
        self.agent_count_tokens: CFunction = c.panto_agent_count_tokens
        self.agent_list_models: CFunction = c.panto_agent_list_models
        self.agent_add_tool: CFunction = c.panto_agent_add_tool
        self.agent_tools: CFunction = c.panto_agent_tools
        self.tools_new: CFunction = c.panto_tools_new
        self.tools_free: CFunction = c.panto_tools_free
        self.tools_add: CFunction = c.panto_tools_add
        self.tools_export: CFunction = c.panto_tools_export
        self.tools_error: CFunction = c.panto_tools_error
        self.next_event: CFunction = c.panto_next_event
        self.next_events: CFunction = c.panto_next_events
        # The same function, with nothing declared: ctypes passes its arguments as they are, with
        # no conversion at each call. For NativeBatch only, which passes ctypes objects of the
        # declared types.
        self.next_events_unchecked: CFunction = c["panto_next_events"]
        # panto_step_events, undeclared as next_events_unchecked is (for Stream's `async for`).
        self.step_events_unchecked: CFunction = c["panto_step_events"]
        self.stream_unread: CFunction = c.panto_stream_unread
        self.submit_tool_result: CFunction = c.panto_stream_submit_tool_result
        self.stream_tool_progress: CFunction = c.panto_stream_tool_progress
        self.stream_approve: CFunction = c.panto_stream_approve
        self.stream_deny: CFunction = c.panto_stream_deny
        self.stream_steer: CFunction = c.panto_stream_steer
        self.agent_continue: CFunction = c.panto_agent_continue
        self.agent_pending_round: CFunction = c.panto_agent_pending_round
        self.agent_resume: CFunction = c.panto_agent_resume
        self.stream_follow_up: CFunction = c.panto_stream_follow_up
        self.stream_withdraw_queued: CFunction = c.panto_stream_withdraw_queued
        self.stream_final_json: CFunction = c.panto_stream_final_json
        self.stream_cancel: CFunction = c.panto_stream_cancel
        self.stream_reopen: CFunction = c.panto_stream_reopen
        self.stream_error: CFunction = c.panto_stream_error
        self.stream_free: CFunction = c.panto_stream_free
        # The panto_*_name() functions, memoized (their results are static).
        self.status_name: Callable[[int], str] = _NameCache(c.panto_status_name).get
        self.event_kind_name: Callable[[int], str] = _NameCache(c.panto_event_kind_name).get
        self.block_kind_name: Callable[[int], str] = _NameCache(c.panto_block_kind_name).get
        self.stop_reason_name: Callable[[int], str] = _NameCache(c.panto_stop_reason_name).get
        self.part_kind_name: Callable[[int], str] = _NameCache(c.panto_part_kind_name).get
        #: The names of the block kinds this module knows, for decoding events in bulk.
        self.block_kind_names: Dict[int, str] = {
            k: self.block_kind_name(k) for k in (BLOCK_NONE, BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL_CALL, BLOCK_REDACTED_THINKING)
        }


class _NameCache:
    """Memoizes one of the panto_*_name() functions."""

    __slots__ = ("_fn", "_names")

    def __init__(self, fn: Callable[[int], Optional[bytes]]) -> None:
        self._fn = fn
        self._names: Dict[int, str] = {}

    def get(self, value: int) -> str:
        try:
            return self._names[value]
        except KeyError:
            raw = self._fn(value)
            name = raw.decode("utf-8") if raw is not None else "unknown"
            self._names[value] = name
            return name


class AbiMismatch(ImportError):
    """The shared library was built for another C ABI version than this package."""


def library_file_names() -> List[str]:
    if sys.platform == "darwin":
        return ["libpanto.dylib"]
    if sys.platform == "win32":
        return ["panto.dll"]
    return ["libpanto.so"]


def candidate_paths() -> List[str]:
    """Where the library is looked for, in order: $PANTO_LIBRARY, then panto/_lib/."""
    paths: List[str] = []
    env = os.environ.get("PANTO_LIBRARY")
    if env:
        paths.append(env)
    lib_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib")
    paths.extend(os.path.join(lib_dir, name) for name in library_file_names())
    return paths


def load() -> Tuple[Optional[Library], List[str]]:
    """Loads the first library found. Returns (None, paths looked at) when there is none.

    A file that exists but cannot be loaded, is not panto, or has another ABI version raises
    ImportError: that is a broken install, not a missing one.
    """
    looked = candidate_paths()
    for path in looked:
        if not os.path.isfile(path):
            continue
        try:
            return Library(path), looked
        except OSError as e:
            raise ImportError(f"panto: cannot load the shared library {path}: {e}") from e
    return None, looked


# Loaded once, at import of the package. None when no library was found: `import panto` still
# works (e.g. for `python -m panto.emulator`), and the first use raises panto.LibraryNotFound.
LIB, LOOKED_IN = load()
