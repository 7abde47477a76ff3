"""Agent: a conversation with one model of one provider."""

from __future__ import annotations

import ctypes
from _thread import RLock

from . import _native
from .config import Budget, KeepAlive, RetryPolicy, Timeouts, config_value
from .errors import Error, InvalidArgumentError, LibraryNotFound, error_class, from_native
from ._handle import StreamHandle, free_handle, free_orphans
from .parts import Media, native_parts, parts_of
from .stream import Stream
from .events import PendingCall, Spent, Usage
from . import _abi

# Not imported at run time, to keep `import panto` cheap: typing, json (imported where used)
# and the tools module (imported when an agent gets tools).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import TracebackType
    from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Sequence, Set, Tuple, Type, TypeVar, Union, overload

    from dataclasses import dataclass

    from .parts import GivenPart

    from ._output import ResponseFormatArg
    from .config import BudgetArg, KeepAliveArg, LogArg, ReadToolArg, RetryArg, TimeoutsArg, ToolChoiceArg
    from .conversation import MessageDict
    from .models import ModelEntry, ModelInfo
    from .settings import SettingsDict
    from .message import AssistantMessage
    from .tools import Registry, Tool
    from .events import ApprovalCall

    # typing.Self is Python 3.11's; checkers know typing_extensions without it being installed.
    from typing_extensions import Self

    T = TypeVar("T")

    #: What `tools=` takes: a Registry, or an iterable of Tools, ToolClass subclasses, classes
    #: decorated with @panto.tool, typed functions, or spec dicts (tools without a handler).
    ToolsArg = Union[Registry, Iterable[Any]]

    #: What `approval=` takes: a function of a waiting call, returning True (run it), False
    #: or (False, reason) (deny it).
    ApprovalPolicy = Callable[[ApprovalCall], Union[bool, Tuple[bool, str]]]

else:
    from ._frozen import dataclass  # the same frozen dataclasses, cheaper (see _frozen.py)

__all__ = ["Agent", "Connections"]


@dataclass(frozen=True)
class Connections:
    """What an agent's connections did so far (`Agent.connections`): `opened` counts the
    connections it opened (TCP connections, and CONNECT tunnels through a proxy), `reused` the
    requests it sent on a connection kept alive from an earlier request (see
    `panto.KeepAlive`)."""

    opened: int
    reused: int


@dataclass(frozen=True)
class McpServerStatus:
    """Where one of the agent's MCP servers stands (`Agent.mcp_status`, docs/mcp.md).

    `state`: "not_started" (no turn needed it yet), "ready", "failed" (it could not start or
    broke during a call: `error` says why) or "closed" (its process exited while no request
    waited); a failed or closed server starts again at the next turn. `transport`: "stdio" or
    "http". `protocol_version`, `server_name` and `server_version` come from its last
    `initialize` answer ("" before it); `tool_count` counts the tools of it the agent offers;
    `stderr_tail` is what it wrote to stderr last (over HTTP: why its last exchange failed)."""

    name: str
    transport: str
    state: str
    protocol_version: str
    server_name: str
    server_version: str
    tool_count: int
    error: str
    stderr_tail: str


_MCP_STATES = {0: "not_started", 1: "ready", 2: "failed", 3: "closed"}
_MCP_TRANSPORTS = {0: "stdio", 1: "http"}


@dataclass(frozen=True)
class TokenCount:
    """The input tokens of a request (`Agent.count_tokens`): `input_tokens` as the provider
    counted them, or, with `estimated` True, as panto estimated them (a provider without a
    counting endpoint: OpenAI Chat Completions)."""

    input_tokens: int
    estimated: bool = False



def _turn_options(options: Dict[str, Any]) -> bytes:
    """A turn's options as the JSON text the library takes (b"" for none)."""
    if not options:
        return b""
    import json

    return json.dumps({k: config_value(k, v) for k, v in options.items()}, ensure_ascii=False).encode("utf-8")

class Agent:
    """An agent: a provider, a model and the conversation so far.

    `run(text)` appends a user message and returns the `Stream` of the turn. An agent runs one
    turn at a time: `run` while a stream is unfinished raises `panto.BusyError`.

        with panto.Agent(provider="anthropic", model="claude-sonnet-4-5") as agent:
            with agent.run("Hello") as stream:
                for text in stream.text():
                    print(text, end="")

    `base_url` defaults to $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL, else the provider's
    public API (https://api.anthropic.com, https://api.openai.com/v1); `api_key` to
    $ANTHROPIC_API_KEY or $OPENAI_API_KEY; `max_tokens` to 4096. A configuration the library
    refuses raises `panto.ConfigError`; a missing shared library raises
    `panto.LibraryNotFound`.

    Tools (docs/tool-use.md): `tools` are registered with the agent (see `add_tool`);
    `capabilities` are what the agent is granted (only the tools whose capabilities it holds
    are offered to the model); `max_tool_iterations` (default 10) bounds the tool rounds of a
    turn; `read_tool` enables the native `read` tool: a directory (its root) or
    `{"root": dir, "max_bytes": n, "confined": bool}` (`confined` false: paths outside the
    root are read too, for an approval rule that asks about them), and needs the capability
    "fs.read". While a stream is
    iterated, the agent's tools run automatically:

        @panto.tool
        def get_weather(city: str) -> str:
            '''Current weather for a city.'''
            return "Sunny"

        with panto.Agent(provider="anthropic", model="claude-sonnet-4-5", tools=[get_weather]) as agent:
            for text in agent.run("Weather in Paris?").text():
                print(text, end="")

    A tool with `approval="always"` (or an `approval_rules` entry that asks) waits for a
    person's answer: iterating raises `panto.ApprovalPendingError` until `stream.approve(id)` or
    `stream.deny(id, reason)`. `approval` answers instead, as the stream meets each such call:
    a plain function of a `panto.ApprovalCall` returning True (run it), False (deny it), or
    `(False, "reason")` (deny it, the model reads the reason). It runs on the thread that
    iterates; an exception in it denies the call, its text as the reason:

        def policy(call: panto.ApprovalCall) -> Union[bool, Tuple[bool, str]]:
            if call.name == "bash" and "rm " in call.input.get("command", ""):
                return False, "no deleting"
            return True

    Resilience: `thinking` is "off" (the default), "minimal", "low", "medium" or "high"
    (Anthropic extended thinking budgets, OpenAI `reasoning_effort`); `retry` is a
    `panto.RetryPolicy` (or a dict of its fields) for failed provider calls, which the stream
    reports as `panto.ProviderRetry` events; `timeouts` is a `panto.Timeouts` (or a dict) whose
    limits end a turn with `panto.APITimeoutError`; `keep_alive` is a `panto.KeepAlive` (or a
    dict): how long an idle connection is kept for the next request (`agent.connections`
    counts them). `set_config()` changes any of these between turns:

        agent = panto.Agent(provider="anthropic", model="claude-sonnet-4-5", thinking="low",
                            retry=panto.RetryPolicy(max_retries=5),
                            timeouts=panto.Timeouts(idle_ms=30_000))
        agent.set_config(thinking="off")

    `set_config(provider=..., model=...)` may switch provider or model between turns: the
    conversation is kept in panto's own form and written for whichever provider comes next
    (docs/conversations.md says what is converted or left out). The new provider's
    `base_url` and `api_key` come from its variables ($OPENAI_BASE_URL, $OPENAI_API_KEY),
    else its public API, not from the old one's: only a `base_url` you gave stays, with the
    `api_key` given with it (docs/requests.md, "A provider switch").

    Conversations that last (docs/conversations.md): `export()` / `import_()` a conversation
    as JSON, edit it (`truncate()`, `drop_last()`, `rollback_turn()`), and `compaction`
    ({"enabled": True, "context_window": n, "reserve_tokens": n, "keep_recent_tokens": n,
    "prompt": text}): before a request that would overflow the model's context window, older
    messages are summarized (`panto.CompactionStart` / `panto.CompactionEnd` in the stream);
    `compact()` does it now. `panto.Session` keeps the conversation in a file.

    Request parameters (docs/requests.md has each provider's wire form), sent with every
    request when given: `temperature`, `top_p`, `top_k` (Anthropic), `stop` (a str or a list),
    `seed`, `presence_penalty`, `frequency_penalty` (OpenAI), `metadata` (OpenAI), `user`,
    `parallel_tool_calls`, `tool_choice` ("auto", "none", "required", {"name": tool} or a
    `panto.Tool`), `service_tier`, `thinking={"budget_tokens": n}` (Anthropic),
    `reasoning_effort` (OpenAI), `interleaved_thinking` (Anthropic), `response_format` (a
    dataclass, TypedDict or pydantic model class, a JSON Schema dict, or the library's format dict: see
    `parse()`), `cache` (prompt caching: {"mode", "ttl", "key", "retention"}), and the escape
    hatch `extra_headers` / `extra_body`; `server_tools`, Anthropic's hosted tools as the API
    defines them (`[{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]`,
    web fetch, code execution, an MCP toolset `{"type": "mcp_toolset", "mcp_server_name":
    "docs"}`), added to the request's tools with the beta header a type needs;
    `hosted_mcp_servers`, the remote MCP servers of Anthropic's MCP connector (`[{"type":
    "url", "url": ..., "name": "docs"}]`, sent as the body's `mcp_servers`). A parameter the provider does not have raises `panto.ConfigError`. `tool_execution="sequential"` runs the host tools of a message one
    after another (default "parallel"); `log` is "debug", "body" or {"level", "file"}
    (`PANTO_LOG`). Each may also be given to one turn: `run(input, temperature=0)`.
    `mcp_servers` ({name: {"command", "args", "env", "cwd", "tools", "requires", "timeout_ms"}},
    or {name: {"url", "headers", ...}} for a Streamable HTTP server) are MCP servers whose tools
    the agent offers and runs itself (docs/mcp.md).
    `model_info` gives the model's limits, prices and abilities where the model catalog lacks
    them or differs (docs/models-and-cost.md); MessageEnd and MessageComplete carry `cost`.
    `budget` is a `panto.Budget` (or a dict): what a turn may spend (output tokens, tool
    rounds, wall time) before it ends normally, `MessageComplete.stop_reason == "budget"`;
    `run(text, budget=...)` changes it for one turn.

    Threads: any thread may call the agent; a call waits for the native call another thread
    makes on the agent or one of its streams, if any (a stream's `next()` waiting for the
    provider's next event), as the C API takes one call at a time. `close()` makes a
    `next()` blocked on another thread return first (see `Stream`).
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
        tools: Optional[ToolsArg] = None,
        capabilities: Optional[Iterable[str]] = None,
        max_tool_iterations: Optional[int] = None,
        read_tool: Optional[ReadToolArg] = None,
        thinking: Optional[Union[str, Mapping[str, Any]]] = None,
        retry: Optional[RetryArg] = None,
        timeouts: Optional[TimeoutsArg] = None,
        keep_alive: Optional[KeepAliveArg] = None,
        compaction: Optional[Mapping[str, Any]] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        top_k: Optional[int] = None,
        stop: Optional[Union[str, Sequence[str]]] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        metadata: Optional[Mapping[str, str]] = None,
        user: Optional[str] = None,
        parallel_tool_calls: Optional[bool] = None,
        tool_choice: Optional[ToolChoiceArg] = None,
        service_tier: Optional[str] = None,
        reasoning_effort: Optional[str] = None,
        interleaved_thinking: Optional[bool] = None,
        response_format: Optional[ResponseFormatArg] = None,
        cache: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        server_tools: Optional[Sequence[Mapping[str, Any]]] = None,
        hosted_mcp_servers: Optional[Sequence[Mapping[str, Any]]] = None,
        tool_execution: Optional[str] = None,
        log: Optional[LogArg] = None,
        mcp_servers: Optional[Mapping[str, Mapping[str, Any]]] = None,
        model_info: Optional[Mapping[str, Any]] = None,
        budget: Optional[BudgetArg] = None,
        approval: Optional[ApprovalPolicy] = None,
    ) -> None:
        config: Dict[str, Any] = {"provider": provider, "model": model}
        for key, value in dict(locals()).items():  # the keyword arguments, in order
            if key not in ("self", "provider", "model", "tools", "approval", "config") and value is not None:
                config[key] = config_value(key, value)
        self._open(config, tools, approval)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, tools: Optional[ToolsArg] = None,
                    approval: Optional[ApprovalPolicy] = None) -> Self:
        """An agent from the configuration object of `panto_agent_new`, passed on as is
        (keys this package does not know reach the library, which judges them). Tool specs
        in its "tools" key have no handler (run them by hand); `tools` adds tools as the
        constructor's argument does. A config with a "session" key: `panto.Session.from_config`
        gives the agent its session's `info` and `fork`."""
        agent = cls.__new__(cls)
        plain = {k: config_value(k, v) if k == "response_format" else v.to_json() if isinstance(v, (RetryPolicy, Timeouts, KeepAlive, Budget)) else v
                 for k, v in config.items()}
        agent._open(plain, tools, approval)
        return agent

    def _open(self, config: Dict[str, Any], tools: Optional[ToolsArg] = None,
              approval: Optional[ApprovalPolicy] = None) -> None:
        self._ptr: Optional[Any] = None  # set first: __del__ may run if this fails
        self._approval = _check_policy(approval)
        # Held during every native call on the agent and its streams (see StreamHandle).
        self._calls = RLock()
        self._orphans: List[Any] = []  # native streams a finalizer left to free
        self._streams: Set[StreamHandle] = set()
        self._tools: Dict[str, Tool] = {}  # host tools registered from Python, by name
        # Check the tools before the agent exists: a bad declaration is a TypeError here.
        declared = _declared_tools(tools)
        lib = _native.LIB
        if lib is None:
            raise LibraryNotFound(_native.LOOKED_IN)
        self._lib: _native.Library = lib
        import json

        raw = json.dumps(config).encode("utf-8")
        out = _native.AgentPtr()
        rc = lib.agent_new(_native.string(raw), ctypes.byref(out))
        if rc < 0:
            if out:  # PANTO_ERR_CONFIG: the agent holds the reason
                try:
                    raise self._error(out, rc)
                finally:
                    lib.agent_free(out)
            raise error_class(rc)(lib.status_name(rc), status=rc, code=lib.status_name(rc))
        self._ptr = out
        try:
            for t in declared:
                self.add_tool(t)
        except BaseException:
            self.close()
            raise

    # ---- configuration -----------------------------------------------------------------

    def set_config(self, **changes: Any) -> None:
        """Changes the configuration: the keyword arguments are the constructor's (except
        `tools`), and only the keys given change; `retry`, `timeouts` and `budget` change only
        the fields they name. None clears an optional string (`system=None`) or disables the
        `read_tool`. Typically between turns, or before `Stream.reopen()`:

            agent.set_config(thinking="off", retry=panto.RetryPolicy(max_retries=0))

        Raises `panto.ConfigError` when the library refuses a value (nothing changed then), and
        `panto.BusyError` while a stream of the agent is unfinished."""
        import json

        self._live()
        config = {key: config_value(key, value) for key, value in changes.items()}
        raw = json.dumps(config).encode("utf-8")
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_set_config(ptr, _native.string(raw))
            if rc < 0:
                raise self._error(ptr, rc)

    @property
    def settings(self) -> SettingsDict:
        """The settings the agent holds, in the constructor's keys: `provider`, `model`,
        `base_url` (where requests go, whether given or derived from the provider's
        environment variable or default), `system` (None: none), `max_tokens`, `thinking`,
        `max_tool_iterations` and `capabilities`. Never the API key. After a provider switch
        it shows the address and model the switch gave:

            agent.set_config(provider="openai", model="gpt-4o-mini")
            agent.settings["base_url"]  # 'https://api.openai.com/v1'

        A new dict each time; readable while a turn runs."""
        result: SettingsDict = _json_loads(self._string(self._lib.agent_settings))
        return result

    @property
    def model_info(self) -> Optional[ModelInfo]:
        """What panto knows of the agent's model: the model catalog's entry with the config's
        `model_info` over it, as its requests see it (after a model switch too); None when
        neither knows the model. `panto.model_info(provider, model)` asks without an agent."""
        from .models import from_json

        return from_json(self._string(self._lib.agent_model_info))

    # ---- tools -------------------------------------------------------------------------

    def add_tool(self, tool: Any) -> Tool:
        """Registers a host tool: a `panto.Tool`, a ToolClass subclass (or a class decorated
        with @panto.tool), a typed function, or a spec dict (a tool without a handler, which
        you run by hand). Returns its Tool.

        Raises `panto.ConfigError` when the library refuses it (a name already taken, a bad
        schema) and `panto.BusyError` while a stream of the agent is unfinished."""
        import json

        from .tools import as_tool

        self._live()
        t = as_tool(tool)
        raw = json.dumps(t.spec()).encode("utf-8")
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_add_tool(ptr, _native.string(raw))
            if rc < 0:
                raise self._error(ptr, rc)
            self._tools[t.name] = t
        _load_tool_runner([t])
        return t

    def tools(self, format: str = "anthropic", only_allowed: bool = True) -> List[Dict[str, Any]]:
        """The agent's tools as the library sends them: `format` "anthropic" ({name,
        description, input_schema}), "openai" ({type: "function", function: {...}}) or
        "panto" (the specs as registered, with "native": true for panto's own tools such as
        `read`). With `only_allowed` (the default), only the tools the agent's capabilities
        allow, which are the ones offered to the model."""
        self._live()
        if not isinstance(format, str):
            raise TypeError(f"the tools format must be a str, not {type(format).__name__}")
        tool_format = _native.tool_format(format)
        result: List[Dict[str, Any]] = _json_loads(self._string(self._lib.agent_tools, tool_format, 1 if only_allowed else 0))
        return result

    def get_tool(self, name: str) -> Optional[Tool]:
        """The host tool registered from Python under `name`, or None."""
        return self._tools.get(name)

    # ---- turns -------------------------------------------------------------------------

    def run(self, input: Union[str, Sequence[GivenPart], Media], *, run_tools: bool = True, **options: Any) -> Stream:
        """Appends the user message `input` to the conversation and returns the turn's
        stream. Nothing is sent before the first `next()` on the stream.

        `options` apply to this turn only (every request of it), over the agent's
        configuration, which is unchanged: the request parameters of the constructor
        (`temperature`, `tool_choice`, `response_format`, `extra_body`, ...), `max_tokens`,
        `system`, `budget` (a `panto.Budget` or a dict: the budgets it names, for this turn)
        and `cache_breakpoint=True` (the user message is a prompt-cache breakpoint,
        kept in the conversation). One the library refuses raises `panto.ConfigError`, and
        nothing is appended.

        `input` is a str, or a list of parts: str (text) and media (`panto.Image`,
        `panto.Document`, `panto.Media`, or bytes), in order, e.g.
        `agent.run(["What is in this picture?", panto.Image("photo.jpg")])`. panto finds each
        medium's format from its bytes and fits it to the provider's rules; media it cannot
        send become a short text note saying why (see `panto.Media`). Raises TypeError for a
        part of another type, before anything is sent.

        With `run_tools` (the default) iterating the stream runs the tools the model calls
        (after yielding their `ToolCallStart`); with `run_tools=False` you give each result
        yourself: `stream.submit_tool_result(id, content)` or `stream.run_tool(event)`."""
        self._live()
        run_input, keep = _native_input(input, "run()")
        raw_options = _turn_options(options)
        if raw_options:
            run_input.options = _native.string(raw_options)
        return self._start(lambda ptr, out: self._lib.agent_run(ptr, ctypes.byref(run_input), out), run_tools)

    def _start(self, call: Callable[[Any, Any], int], run_tools: bool) -> Stream:
        """The stream a native call that starts a turn (`call(agent, &out)`) returns."""
        out = _native.StreamPtr()
        with self._calls:
            ptr = self._live()
            free_orphans(self._lib, self._orphans)  # an unfinished one keeps the agent busy
            rc = call(ptr, ctypes.byref(out))
            if rc < 0:
                raise self._error(ptr, rc)
            handle = StreamHandle(self._lib, out, self._calls, self._orphans, self._tools, self._streams)
            self._streams.add(handle)
        return Stream(self, handle, run_tools=bool(run_tools))

    def continue_turn(self, *, run_tools: bool = True, **options: Any) -> Stream:
        """Returns the stream of a turn that answers the conversation as it is, appending no
        user message: its last message must be the user's (a question, a tool round's
        results), e.g. a conversation `import_()` brought from another process
        or worker. `options` and `run_tools` as `run()`. Raises `panto.ConversationError`
        when the conversation does not end with a user message (nothing to answer); a turn
        that fails keeping nothing leaves the conversation as it was."""
        self._live()
        raw_options = _turn_options(options)
        return self._start(lambda ptr, out: self._lib.agent_continue(ptr, _native.string(raw_options), out), run_tools)

    def pending_round(self) -> List[PendingCall]:
        """The calls of the tool round the agent holds, left waiting for a person, in call
        order (empty when none waits): a stream closed or canceled while a call waited for
        its answer (`panto.ApprovalPendingError`) leaves it, and so does a session whose
        process ended during a round; an agent opening that session, in any process or
        language, has it too. `resume_turn()` goes on with it; the next `run()` (or
        `continue_turn()`, `compact()`) first answers every call left with an error result
        saying why (not approved, not run, or the process ended), so no request carries a call
        without its result. Raises `panto.BusyError` while a stream of the agent is
        unfinished."""
        calls_ptr = ctypes.POINTER(_native.PantoPendingCall)()
        count = ctypes.c_size_t(0)
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_pending_round(ptr, ctypes.byref(calls_ptr), ctypes.byref(count))
            if rc < 0:
                raise self._error(ptr, rc)
            return [
                PendingCall(
                    _native.copy_string(c.id),
                    _native.copy_string(c.name),
                    _json_loads(_native.copy_string(c.input)),
                    _PENDING_STATES[c.state],
                )
                for c in (calls_ptr[i] for i in range(count.value))
            ]

    def resume_turn(self, *, run_tools: bool = True, **options: Any) -> Stream:
        """Returns the stream that goes on with the round `pending_round()` lists: an
        `ApprovalRequest` for the calls still asked about (answer them with
        `stream.approve(id)` / `stream.deny(id, reason)`, or give the agent
        `approval=`...), a `ToolCallStart` for each other call (those answered already are not
        run again: their results come with the round's `ToolResult`s; one that had started
        gets "The process ended before this call finished."), then the turn goes on as any.
        Closed again while a call waits, the stream leaves the round pending again. `options`
        and `run_tools` as `run()`. Raises `panto.StateError` when no round waits."""
        self._live()
        raw_options = _turn_options(options)
        return self._start(lambda ptr, out: self._lib.agent_resume(ptr, _native.string(raw_options), out), run_tools)

    def count_tokens(self, input: Union[str, Sequence[GivenPart], Media, None] = None) -> TokenCount:
        """The input tokens of the request the next turn would send with `input` as its user
        message (None: the conversation as it is): the conversation, the system prompt, the
        tools and thinking, as `run()` would send them. Nothing is appended.

            agent.count_tokens("Summarize the report").input_tokens  # e.g. 1834

        The provider counts them (Anthropic, Gemini, OpenAI Responses, Bedrock: their
        token-counting endpoints, one request under the agent's timeouts); OpenAI Chat
        Completions has no such endpoint, so the count is panto's estimate and
        `estimated` is True. Blocks until the answer; a failed request raises the
        `panto.Error` a turn's would (`panto.AuthenticationError`, `panto.TimeoutError`, ...),
        and `panto.BusyError` while a stream of the agent is unfinished. `input` is what
        `run()` takes."""
        self._live()
        given, keep = _native_input(input, "count_tokens()") if input is not None else (None, None)
        count = _native.PantoTokenCount()
        with self._calls:
            ptr = self._live()
            free_orphans(self._lib, self._orphans)  # an unfinished one keeps the agent busy
            rc = self._lib.agent_count_tokens(ptr, ctypes.byref(given) if given is not None else None, ctypes.byref(count))
            if rc < 0:
                raise self._error(ptr, rc)
        del keep
        return TokenCount(input_tokens=count.input_tokens, estimated=bool(count.estimated))

    async def acount_tokens(self, input: Union[str, Sequence[GivenPart], Media, None] = None) -> TokenCount:
        """`count_tokens()` for coroutines: the request waits in a worker thread
        (`asyncio.to_thread`), so the running loop goes on meanwhile; the same answer and the
        same errors. (The counting request has no stepped form yet, unlike a turn's.)

            count = await agent.acount_tokens("Summarize the report")"""
        import asyncio

        return await asyncio.to_thread(self.count_tokens, input)

    def list_models(self) -> List[ModelEntry]:
        """The models the provider lists for the account, every page, in its order, each with
        what the model catalog says of it (`info`, None when the catalog does not list it):

            for m in agent.list_models():
                print(m.id, m.info.max_input_tokens if m.info else "unknown")

        Anthropic and OpenAI (and OpenAI-compatible servers) `GET /v1/models`, Gemini
        `GET /v1beta/models`, Bedrock ListFoundationModels (the control plane,
        `bedrock.REGION.amazonaws.com`, or AWS_ENDPOINT_URL_BEDROCK). Blocks until the last
        page; a failed request raises the `panto.Error` a turn's would
        (`panto.AuthenticationError`, `panto.RateLimitError`, ...), and `panto.BusyError`
        while a stream of the agent is unfinished."""
        from .models import entries_from_json

        s = _native.PantoString()
        with self._calls:
            ptr = self._live()
            free_orphans(self._lib, self._orphans)  # an unfinished one keeps the agent busy
            rc = self._lib.agent_list_models(ptr, ctypes.byref(s))
            if rc < 0:
                raise self._error(ptr, rc)
            text = _native.copy_string(s)
        return entries_from_json(text)

    async def alist_models(self) -> List[ModelEntry]:
        """`list_models()` for coroutines: the requests wait in a worker thread
        (`asyncio.to_thread`), so the running loop goes on meanwhile; the same answer and the
        same errors.

            models = await agent.alist_models()"""
        import asyncio

        return await asyncio.to_thread(self.list_models)

    def complete(self, input: Union[str, Sequence[GivenPart], Media], **options: Any) -> AssistantMessage:
        """Runs a whole turn and returns its last assistant message (the non-streaming form
        of `run()`, for scripts): tools run as they do while iterating, `options` as `run()`
        takes them, a failure raises its `panto.Error`.

            print(agent.complete("Hello", temperature=0).text)"""
        with self.run(input, **options) as stream:
            return stream.final_message()

    async def acomplete(self, input: Union[str, Sequence[GivenPart], Media], **options: Any) -> AssistantMessage:
        """`complete()` for coroutines: the turn is read as `async for` reads it (stepped on
        the running loop, no thread waits), then its last assistant message is returned.

            message = await agent.acomplete("Hello")"""
        async with self.run(input, **options) as stream:
            return await stream.afinal_message()

    if TYPE_CHECKING:

        @overload
        def parse(self, input: Union[str, Sequence[GivenPart], Media], output_type: Type[T], **options: Any) -> T: ...
        @overload
        def parse(self, input: Union[str, Sequence[GivenPart], Media], output_type: Mapping[str, Any], **options: Any) -> Any: ...

    def parse(self, input: Union[str, Sequence[GivenPart], Media], output_type: Any, **options: Any) -> Any:
        """Runs a turn whose answer is structured output of `output_type` and returns it
        parsed: an instance of a dataclass or of a pydantic model (validated by Pydantic), a dict of a TypedDict (its fields converted:
        nested dataclasses, enums), or the JSON value for a JSON Schema dict.

            @dataclass
            class City:
                name: str
                population: int

            city = agent.parse("The largest city of France?", City)

        The schema is made as for a tool's input (`panto.tool`), sent as the turn's
        `response_format` (`options` as `run()` takes them; a `response_format` among them
        is a TypeError). An answer that is not JSON of the schema raises `panto.OutputError`,
        whose `output` is the model's text; the turn's other failures raise their
        `panto.Error`."""
        if "response_format" in options:
            raise TypeError("parse() sets the turn's response_format from output_type: do not pass one")
        with self.run(input, response_format=output_type, **options) as stream:
            return stream.final_json(output_type)

    if TYPE_CHECKING:

        @overload
        async def aparse(self, input: Union[str, Sequence[GivenPart], Media], output_type: Type[T], **options: Any) -> T: ...
        @overload
        async def aparse(self, input: Union[str, Sequence[GivenPart], Media], output_type: Mapping[str, Any], **options: Any) -> Any: ...

    async def aparse(self, input: Union[str, Sequence[GivenPart], Media], output_type: Any, **options: Any) -> Any:
        """`parse()` for coroutines: the turn is read as `async for` reads it, then its answer
        is returned parsed as `output_type`, with the same errors as `parse()`.

            city = await agent.aparse("The largest city of France?", City)"""
        if "response_format" in options:
            raise TypeError("aparse() sets the turn's response_format from output_type: do not pass one")
        async with self.run(input, response_format=output_type, **options) as stream:
            return await stream.afinal_json(output_type)

    @property
    def conversation(self) -> List[MessageDict]:
        """The conversation so far: the "messages" of `export()`, a list of {"role": ...,
        "content": [blocks]} messages.

        Blocks are {"type": "text" | "thinking" | "redacted_thinking", "text"} (a thinking
        block may carry its "signature"), {"type": "image" | "document", "media_type",
        "data"}, {"type": "tool_call", "id", "name", "input"}, {"type": "tool_result",
        "id", "content", "is_error"} or {"type": "server_block", "name", "json"} (a block of
        the provider's that panto keeps as it came, e.g. a server tool's call or result: "name"
        is its type, "json" its JSON object as a string, sent back only to the provider and
        model that wrote it). An assistant message carries its "provider", "model",
        "stop_reason" and "usage"; "stop_reason": "aborted" when its turn was canceled
        (`Stream.cancel()`, `close()` or Ctrl-C): it holds what the model had said until
        then. A user message that holds a compaction's summary carries "compaction"."""
        result: List[MessageDict] = _json_loads(self._string(self._lib.agent_conversation))
        return result

    # ---- the conversation as a document, and editing it --------------------------------

    def export(self) -> str:
        """The conversation as a versioned JSON document, `{"version": 1, "messages": [...]}`
        (docs/conversations.md): every block kind, each assistant message's provider, model,
        stop reason and usage. `import_()` takes it back, in any language; export, import,
        export gives the same text."""
        return self._string(self._lib.agent_export)

    def import_(self, document: Union[str, bytes, Mapping[str, Any]]) -> None:
        """Replaces the conversation with an exported document: its JSON text (str or bytes),
        or the parsed dict (dumped as compact JSON). Everything is checked first: a document
        that is not a valid export raises `panto.ConversationError` naming the first problem,
        and the conversation is unchanged. Raises `panto.BusyError` while a stream of the
        agent is unfinished. (`import` is a keyword: hence the underscore.)"""
        if isinstance(document, str):
            raw = _native.utf8(document)
        elif isinstance(document, (bytes, bytearray, memoryview)):
            raw = bytes(document)
        else:
            import json
            from collections.abc import Mapping

            if not isinstance(document, Mapping):
                raise TypeError(f"import_() needs a str, bytes or a dict, not {type(document).__name__}")
            raw = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_import(ptr, _native.string(raw))
            if rc < 0:
                raise self._error(ptr, rc)

    @property
    def message_count(self) -> int:
        """The number of messages in the conversation."""
        count = ctypes.c_size_t()
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_message_count(ptr, ctypes.byref(count))
            if rc < 0:
                raise self._error(ptr, rc)
        return count.value

    @property
    def spent(self) -> Spent:
        """What the conversation's assistant messages used and cost so far: their usages
        summed, the cost in USD at the model catalog's list prices, each message at the model
        that wrote it (None when one message's is unknown). Messages a compaction replaced
        are not counted, nor its summary request."""
        usage = _abi.PantoUsage()
        cost = ctypes.c_double()
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_spent(ptr, ctypes.byref(usage), ctypes.byref(cost))
            if rc < 0:
                raise self._error(ptr, rc)
        return Spent(Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                           cache_read_tokens=usage.cache_read_tokens, cache_write_tokens=usage.cache_write_tokens,
                           reasoning_tokens=usage.reasoning_tokens), None if cost.value < 0 else cost.value)

    def truncate(self, message_count: int) -> None:
        """Keeps the first `message_count` messages and drops the rest. Raises
        `panto.InvalidArgumentError` when there are fewer, `panto.ConversationError` when it
        would keep tool calls without their results, `panto.BusyError` while a stream is
        unfinished; nothing changes then."""
        if not isinstance(message_count, int) or isinstance(message_count, bool):
            raise TypeError(f"message_count must be an int, not {type(message_count).__name__}")
        if message_count < 0:
            raise InvalidArgumentError(f"message_count must not be negative, got {message_count}")
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_truncate(ptr, message_count)
            if rc < 0:
                raise self._error(ptr, rc)

    def rollback_turn(self) -> int:
        """Removes the last turn when it failed or was canceled after keeping something (a
        partial answer, tool calls and their results): its user message and every message
        after it. Returns how many messages were removed, 0 when there is nothing to roll
        back. (A turn that fails before keeping anything takes its user message back out
        by itself, so the next turn never sends two user messages in a row.)

            try:
                agent.run("Hello").final_message()
            except panto.Error:
                agent.rollback_turn()  # forget the question and any partial answer

        Raises `panto.BusyError` while a stream is unfinished; nothing changes then."""
        removed = ctypes.c_size_t()
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_rollback_turn(ptr, ctypes.byref(removed))
            if rc < 0:
                raise self._error(ptr, rc)
        return removed.value

    def drop_last(self, n: int = 1) -> None:
        """Drops the last `n` messages (`truncate(message_count - n)`). To undo a failed or
        canceled turn, use `rollback_turn()`. Errors as `truncate()` (dropping more
        messages than there are: `panto.InvalidArgumentError`)."""
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"n must be an int, not {type(n).__name__}")
        with self._calls:  # no other thread changes the count in between
            count = self.message_count
            if n < 0 or n > count:
                raise InvalidArgumentError(f"cannot drop {n} of {count} messages")
            self.truncate(count - n)

    def compact(self, instructions: Optional[str] = None) -> Stream:
        """Compacts the conversation now: the older messages are summarized by the model and
        replaced by one user message holding the summary (docs/conversations.md). Returns a
        `Stream`, read like a turn's: `panto.CompactionStart`, `panto.CompactionEnd`, then
        `panto.MessageComplete` with the summary request's usage:

            for event in agent.compact():
                if isinstance(event, panto.CompactionEnd):
                    print(event.tokens_before, "->", event.tokens_after)

        `instructions` (what the summary should keep or stress: "keep the API names") are
        appended to the compaction prompt of this summary request alone; None or blank: none.

        Raises `panto.StateError` when nothing is older than the agent's
        `keep_recent_tokens` (nothing to compact), `panto.BusyError` while a stream is
        unfinished. A summary request that fails raises its error from the stream, and the
        conversation is unchanged."""
        raw = _native.utf8(instructions or "")
        out = _native.StreamPtr()
        with self._calls:
            ptr = self._live()
            free_orphans(self._lib, self._orphans)
            rc = self._lib.agent_compact_with(ptr, _native.string(raw), ctypes.byref(out))
            if rc < 0:
                raise self._error(ptr, rc)
            handle = StreamHandle(self._lib, out, self._calls, self._orphans, self._tools, self._streams)
            self._streams.add(handle)
        return Stream(self, handle)

    @property
    def connections(self) -> Connections:
        """What the agent's connections did so far: the connections opened and the requests
        sent on a kept-alive one (see `panto.KeepAlive`)."""
        counts = _native.PantoConnections()
        with self._calls:
            ptr = self._live()
            rc = self._lib.agent_connections(ptr, ctypes.byref(counts))
            if rc < 0:
                raise self._error(ptr, rc)
        return Connections(opened=counts.opened, reused=counts.reused)

    def mcp_status(self) -> List[McpServerStatus]:
        """Each MCP server of the agent (config `mcp_servers`), in name order: its state, its
        `initialize` answer, its tool count, why it failed. Call it between turns."""
        out: List[McpServerStatus] = []
        with self._calls:  # the strings live until the next call on the agent
            ptr = self._live()
            count = ctypes.c_size_t(0)
            rc = self._lib.agent_mcp_count(ptr, ctypes.byref(count))
            if rc < 0:
                raise self._error(ptr, rc)
            for i in range(count.value):
                st = _native.PantoMcpStatus()
                rc = self._lib.agent_mcp_status(ptr, i, ctypes.byref(st))
                if rc < 0:
                    raise self._error(ptr, rc)
                out.append(McpServerStatus(
                    name=_native.copy_string(st.name),
                    transport=_MCP_TRANSPORTS.get(st.transport, str(st.transport)),
                    state=_MCP_STATES.get(st.state, str(st.state)),
                    protocol_version=_native.copy_string(st.protocol_version),
                    server_name=_native.copy_string(st.server_name),
                    server_version=_native.copy_string(st.server_version),
                    tool_count=st.tool_count,
                    error=_native.copy_string(st.error),
                    stderr_tail=_native.copy_string(st.stderr_tail),
                ))
        return out

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Frees the agent, after freeing any stream of it still open (those streams then
        act as closed; a `next()` blocked on another thread returns at once). Safe to call
        more than once, from any thread."""
        self._close()

    def _close(self, lock_timeout: float = -1) -> None:
        ptr = self._ptr
        if ptr is None:
            return
        self._ptr = None  # no call on the agent starts from now on
        lib = self._lib
        # First the streams: one that another thread is reading is canceled, then waited for.
        for handle in list(self._streams):
            free_handle(handle, lock_timeout=lock_timeout)
        calls = self._calls
        if not calls.acquire(timeout=lock_timeout):
            return  # a daemon thread frozen by the interpreter's finalization holds it: leave it
        try:
            # A run() that was under way on another thread may have opened one more.
            for handle in list(self._streams):
                free_handle(handle)
            self._streams.clear()
            free_orphans(lib, self._orphans)
            lib.agent_free(ptr)
        finally:
            calls.release()

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def __enter__(self) -> Self:
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
            self._close(lock_timeout=0.5)
        except Exception:  # interpreter shutdown: never raise from a finalizer
            pass

    def __repr__(self) -> str:
        return f"<panto.Agent {'closed' if self._ptr is None else 'open'}>"

    # ---- internals ---------------------------------------------------------------------

    def _string(self, call: Any, *args: Any) -> str:
        """The string a native call on the agent gives (`call(agent, *args, &out)`), copied
        while the agent's lock is held: the library lends it until the next call."""
        s = _native.PantoString()
        with self._calls:
            ptr = self._live()
            rc = call(ptr, *args, ctypes.byref(s))
            if rc < 0:
                raise self._error(ptr, rc)
            return _native.copy_string(s)

    def _live(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise InvalidArgumentError("the agent is closed")
        return ptr

    def _error(self, ptr: Any, rc: int) -> Error:
        detail = _native.PantoError()
        self._lib.agent_error(ptr, ctypes.byref(detail))
        return from_native(self._lib, detail, rc)


def _native_input(input: Union[str, Sequence[GivenPart], Media], what: str) -> Tuple[Any, Any]:
    """A PantoInput of `input` (a str, a list of parts or a Media), and what must be kept alive
    until it is used."""
    native = _native.PantoInput()
    keep: Any = None
    if isinstance(input, str):
        keep = _native.utf8(input)
        native.text = _native.string(keep)
    elif isinstance(input, (list, tuple, Media)):
        array, keep = native_parts(parts_of(input, f"{what} input"))
        native.parts = ctypes.cast(array, ctypes.POINTER(_native.PantoPart))
        native.part_count = len(array)
    else:
        raise TypeError(f"{what} needs a str, a list of parts or a panto.Media, not {type(input).__name__}")
    return native, keep


def _check_policy(approval: Optional[ApprovalPolicy]) -> Optional[ApprovalPolicy]:
    """`approval=` checked: a plain function (a coroutine function cannot answer from inside
    the library's read; an answer that waits for a person is given by closing the stream and
    `resume_turn()` later)."""
    if approval is None:
        return None
    import inspect

    if not callable(approval):
        raise TypeError(f"approval must be a function of a panto.ApprovalCall, not {type(approval).__name__}")
    if inspect.iscoroutinefunction(approval):
        raise TypeError("approval must be a plain function, not an async one: it answers inside the stream's read")
    return approval


# PantoPendingState, by value.
_PENDING_STATES: Tuple[Literal["ask", "to_run", "started", "answered"], ...] = ("ask", "to_run", "started", "answered")


def _json_loads(text: str) -> Any:
    import json

    return json.loads(text)


def _declared_tools(tools: Optional[ToolsArg]) -> List[Tool]:
    """The tools given to the constructor, checked (a bad declaration is a TypeError)."""
    if tools is None:
        return []
    from .tools import as_tool  # only for an agent with tools: it costs more than the rest

    declared = [as_tool(t) for t in _tool_list(tools)]
    _load_tool_runner(declared)
    return declared


def _load_tool_runner(tools: List[Tool]) -> None:
    """Imports the module that runs handlers when a tool has one: with the agent, so that its
    cost (about a millisecond) is not in the first tool round of the first turn."""
    if any(t.handler is not None for t in tools):
        from . import _tool_runner  # noqa: F401


def _tool_list(tools: ToolsArg) -> List[Any]:
    from collections.abc import Mapping

    from .tools import Registry

    if isinstance(tools, Registry):
        return tools.list()
    if isinstance(tools, (str, bytes, Mapping)) or not hasattr(tools, "__iter__"):
        raise TypeError("tools must be a list of tools or a panto.Registry")
    return list(tools)
