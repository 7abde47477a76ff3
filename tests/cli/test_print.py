"""Print mode (`panto -p`) and --json through the real binary against the emulator: what
reaches stdout and stderr, the exit code of each error family, the settings that shape the
request (config file, flags, AGENTS.md), tools, the adaptive thinking fallback, SIGINT."""
from __future__ import annotations

import datetime
import json
import platform
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import RUN_TIMEOUT, error_reply, text_reply, tool_reply

NO_RETRY = {"retry": {"max_retries": 0}}


def body(emu: Any, i: int = 0) -> dict[str, Any]:
    return emu.requests()[i]["body"]


def user_texts(b: dict[str, Any]) -> list[str]:
    """The text of each user message of an Anthropic request body."""
    out = []
    for m in b["messages"]:
        if m["role"] != "user":
            continue
        c = m["content"]
        out.append(c if isinstance(c, str) else "".join(p.get("text", "") for p in c))
    return out


def system_text(b: dict[str, Any]) -> str:
    s = b.get("system", "")
    return s if isinstance(s, str) else "".join(p["text"] for p in s)


def test_streams_the_answer_and_exits_0(emulator, run_panto):
    emu = emulator({"responses": [text_reply("Hello big world")]})
    r = run_panto("-p", "Say hello")
    assert (r.returncode, r.stdout, r.stderr) == (0, "Hello big world\n", "")
    b = body(emu)
    assert user_texts(b) == ["Say hello"]
    assert b["stream"] is True and b["model"] == "claude-sonnet-4-5"


@pytest.mark.parametrize("args", [["-p", "hi"], ["--json", "-p", "hi"], ["--version"],
                                  ["--thinking", "high", "-p", "hi"]])
def test_output_redirected_to_a_file_is_appended_where_the_shell_left_it(
        emulator, panto_bin, cli_env, workdir, args):
    # `( echo HEADER; panto -p hi; echo TRAILER ) > f` and `panto ... > f 2>&1`: stdout and
    # stderr share the file's offset with the shell and with each other, so the command writes
    # where the offset is (streamed), never at offsets of its own from 0 (positional writes).
    emulator({"responses": [text_reply("Hello")]})
    out = workdir / "f.txt"
    cmd = " ".join(["'%s'" % panto_bin, *args])
    with open(out, "wb") as f:
        subprocess.run(["sh", "-c", f"echo HEADER; echo NOTE >&2; {cmd}; echo TRAILER"],
                       stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                       cwd=workdir, env=cli_env, timeout=RUN_TIMEOUT, check=True)
    text = out.read_text()
    assert text.startswith("HEADER\nNOTE\n") and text.endswith("TRAILER\n"), text
    middle = text[len("HEADER\nNOTE\n"):-len("TRAILER\n")]
    if args == ["--version"]:
        assert middle.startswith("panto ")
    elif args[0] == "--json":
        assert [json.loads(line)["event"] for line in middle.splitlines()][-1] == "done"
    else:
        assert middle.endswith("Hello\n"), middle


def test_an_answer_ending_in_a_newline_gets_no_second_one(emulator, run_panto):
    emulator({"responses": [text_reply("one line\n")]})
    assert run_panto("-p", "x").stdout == "one line\n"


def test_the_prompt_from_stdin(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    r = run_panto(input="from a pipe\n")
    assert (r.returncode, r.stdout) == (0, "ok\n")
    assert user_texts(body(emu)) == ["from a pipe\n"]


def test_a_prompt_and_piped_input_go_together(emulator, run_panto):
    """`git diff | panto -p "review this"`: the prompt, a blank line, then what was piped."""
    emu = emulator({"responses": [text_reply("ok"), text_reply("ok")]})
    r = run_panto("--no-session", "-p", "review this", input="--- a/x\n+++ b/x\n")
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", "")
    assert user_texts(body(emu)) == ["review this\n\n--- a/x\n+++ b/x\n"]
    r = run_panto("--no-session", "-p", "just this", input=" \n")  # blank input adds nothing
    assert user_texts(body(emu, 1)) == ["just this"]


def test_a_prompt_with_a_file_on_stdin(emulator, panto_bin, cli_env, workdir):
    emu = emulator({"responses": [text_reply("ok")]})
    (workdir / "notes.txt").write_text("line one\n")
    with open(workdir / "notes.txt") as f:
        r = subprocess.run([str(panto_bin), "--no-session", "-p", "sum up"], stdin=f, capture_output=True,
                           text=True, env=cli_env, cwd=workdir, timeout=RUN_TIMEOUT)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", "")
    assert user_texts(body(emu)) == ["sum up\n\nline one\n"]


def test_a_prompt_and_a_silent_open_pipe_goes_alone_after_a_wait(emulator, start_panto):
    """A parent that never writes to nor closes the pipe does not hang the run: after 3 s
    the prompt goes alone, with a note on stderr."""
    emu = emulator({"responses": [text_reply("ok")]})
    p = start_panto("--no-session", "-p", "hello")
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.read() == b"ok\n"  # the pipe stays open: the run ended without it
    assert p.wait(timeout=RUN_TIMEOUT) == 0
    assert p.stderr.read().decode() == (
        "panto: nothing on stdin after 3 s: the prompt goes without it (</dev/null skips the wait)\n")
    assert user_texts(body(emu)) == ["hello"]


def test_positional_words_are_the_prompt(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("two", "words").returncode == 0
    assert user_texts(body(emu)) == ["two words"]


def test_no_prompt_is_a_usage_error(emulator, run_panto):
    emu = emulator({"responses": [text_reply("never")]})
    r = run_panto("-p", input="  \n")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("panto: no prompt")
    assert emu.requests() == []


def test_no_prompt_and_a_terminal_on_stdin_is_a_usage_error(emulator, panto_bin, cli_env, workdir):
    """-p alone at a terminal does not wait for a prompt typed blind: it says what is missing."""
    import os
    import pty
    emu = emulator({"responses": [text_reply("never")]})
    master, slave = pty.openpty()
    try:
        r = subprocess.run([str(panto_bin), "-p"], stdin=slave, capture_output=True, text=True,
                           cwd=workdir, env=cli_env, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "panto: no prompt: give one (panto -p PROMPT) or pipe it on stdin\n"
    assert emu.requests() == []


@pytest.mark.parametrize("argv, message", [
    (["--bogus"], "panto: unknown option --bogus"),
    (["--model"], "panto: --model needs a value"),
    (["--thinking", "max", "-p", "x"], 'panto: --thinking must be one of off, minimal, low, medium, high, not "max"'),
    (["--continue", "--session", "s1", "-p", "x"], "panto: --continue, --resume, --session, --new-session and --no-session exclude each other"),
])
def test_usage_errors_exit_2_with_the_usage(run_panto, argv, message):
    r = run_panto(*argv)
    assert r.returncode == 2 and r.stdout == ""
    first, rest = r.stderr.split("\n", 1)
    assert first == message
    assert rest.startswith("usage: panto")


def test_version_and_help(run_panto):
    r = run_panto("--version")
    assert r.returncode == 0 and r.stdout.startswith("panto ") and r.stdout.count("\n") == 1
    h = run_panto("--help")
    assert h.returncode == 0 and h.stdout.startswith("usage: panto") and "--allow" in h.stdout


@pytest.mark.parametrize("type_, code, name", [
    ("authentication_error", 3, "authentication"),
    ("permission_error", 3, "permission"),
    ("rate_limit_error", 4, "rate_limit"),
    ("overloaded_error", 4, "overloaded"),
    ("invalid_request_error", 6, "invalid_request"),
    ("not_found_error", 6, "not_found"),
    ("api_error", 6, "server"),
])
def test_provider_errors_exit_with_their_family(emulator, run_panto, write_config, type_, code, name):
    write_config(NO_RETRY)
    emulator({"responses": [error_reply(type_, "It went wrong")]})
    r = run_panto("-p", "x")
    assert (r.returncode, r.stdout) == (code, "")
    assert r.stderr == f"panto: {name}: It went wrong\n"


def test_a_connection_failure_exits_5(run_panto, cli_env, write_config):
    write_config(NO_RETRY)
    # A port nothing listens on (the emulator's, closed).
    from panto.emulator import Emulator
    with Emulator() as emu:
        url = emu.url
    cli_env["ANTHROPIC_BASE_URL"] = url
    r = run_panto("-p", "x")
    assert r.returncode == 5 and r.stdout == ""
    assert r.stderr.startswith("panto: connection: ")


def test_a_malformed_stream_exits_5(emulator, run_panto, write_config):
    write_config(NO_RETRY)
    emulator({"responses": [{"body": "event: message_start\ndata: {not json}\n\n"}]})
    r = run_panto("-p", "x")
    assert r.returncode == 5 and r.stderr.startswith("panto: protocol: ")


def test_a_mid_stream_error_keeps_the_partial_answer(emulator, run_panto, write_config):
    write_config(NO_RETRY)
    emulator({"responses": [{"message": {"content": [{"type": "text", "text": "Partial answer here"}]},
                             "stream_error": {"type": "overloaded_error", "message": "Overloaded", "after_events": 4}}]})
    r = run_panto("-p", "x")
    assert r.returncode == 4
    assert r.stdout == "Partial \n"
    assert r.stderr == "panto: overloaded: Overloaded\n"


def test_no_api_key_for_the_public_endpoint_fails_before_any_request(run_panto, cli_env):
    # (No base URL: the public API, which is never reached: the key is missing.)
    del cli_env["ANTHROPIC_API_KEY"]
    r = run_panto("-p", "x")
    assert (r.returncode, r.stdout) == (3, "")
    assert r.stderr == "panto: authentication: no API key: set ANTHROPIC_API_KEY (or the config key api_key)\n"


def test_no_api_key_for_another_endpoint_is_its_answer(emulator, run_panto, cli_env):
    emulator({"responses": [text_reply("never")]})
    del cli_env["ANTHROPIC_API_KEY"]
    r = run_panto("-p", "x")
    assert r.returncode == 3 and r.stderr == "panto: authentication: x-api-key header is required\n"


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_json_writes_the_transcript(emulator, run_panto):
    emulator({"responses": [text_reply("Hello world", usage={"input_tokens": 7, "output_tokens": 2})]})
    r = run_panto("--json", "-p", "hi")
    assert r.returncode == 0 and r.stderr == ""
    got = lines(r.stdout)
    assert got[0]["event"] == "session" and got[0]["resumed"] is False and got[0]["message_count"] == 0
    usage = {"input_tokens": 7, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0}
    assert got[1:] == [
        {"event": "message_start", "id": "msg_emu_0001", "model": "claude-sonnet-4-5"},
        {"event": "block_start", "index": 0, "kind": "text"},
        {"event": "content_delta", "index": 0, "kind": "text", "text": "Hello "},
        {"event": "content_delta", "index": 0, "kind": "text", "text": "world"},
        {"event": "block_complete", "index": 0, "kind": "text", "text": "Hello world"},
        {"event": "message_end", "stop_reason": "end_turn", "provider_stop_reason": "end_turn", "usage": usage},
        {"event": "message_complete", "stop_reason": "end_turn", "provider_stop_reason": "end_turn", "usage": usage},
        {"event": "done"},
    ]


def test_json_ends_a_failure_with_its_error_line(emulator, run_panto, write_config):
    write_config(NO_RETRY)
    emulator({"responses": [error_reply("rate_limit_error", "Slow down")]})
    r = run_panto("--json", "--no-session", "x")
    assert r.returncode == 4
    assert lines(r.stdout) == [{"event": "error", "code": "rate_limit", "http_status": 429,
                                "type": "rate_limit_error", "message": "Slow down"}]
    assert r.stderr == "panto: rate_limit: Slow down\n"


# Settings: the config file and the flags.

def test_max_tokens_is_the_models_most_output_unless_given(emulator, run_panto, write_config):
    emu = emulator({"responses": [text_reply("a")], "repeat_last": True})
    assert run_panto("--model", "claude-sonnet-4-5", "-p", "x").returncode == 0
    assert body(emu)["max_tokens"] == 64000  # the catalog's entry
    # A model the catalog does not know: the core's default.
    assert run_panto("--model", "claude-test", "-p", "x").returncode == 0
    assert body(emu, 1)["max_tokens"] == 4096
    # The file's model_info over the catalog.
    write_config({"model_info": {"max_output_tokens": 1234}})
    assert run_panto("--model", "claude-test", "-p", "x").returncode == 0
    assert body(emu, 2)["max_tokens"] == 1234


def test_the_config_file_sets_defaults_and_flags_win(emulator, run_panto, write_config):
    emu = emulator({"responses": [text_reply("a"), text_reply("b")], "repeat_last": True})
    write_config({"model": "file-model", "system": "From the file.", "max_tokens": 99})
    assert run_panto("-p", "x").returncode == 0
    b = body(emu)
    assert (b["model"], system_text(b), b["max_tokens"]) == ("file-model", "From the file.", 99)
    assert run_panto("--model", "flag-model", "--system", "From the flag.", "-p", "x").returncode == 0
    b = body(emu, 1)
    assert (b["model"], system_text(b), b["max_tokens"]) == ("flag-model", "From the flag.", 99)


def test_xdg_config_home_is_honoured(emulator, run_panto, cli_env, tmp_path):
    emu = emulator({"responses": [text_reply("a")]})
    xdg = tmp_path / "xdg"
    (xdg / "panto").mkdir(parents=True)
    (xdg / "panto" / "config.json").write_text(json.dumps({"model": "xdg-model"}))
    cli_env["XDG_CONFIG_HOME"] = str(xdg)
    assert run_panto("-p", "x").returncode == 0
    assert body(emu)["model"] == "xdg-model"


@pytest.mark.parametrize("settings, message", [
    ({"modle": "x"}, 'unknown config key "modle"'),
    ({"thinking": "max"}, 'thinking must be one of off, minimal, low, medium, high, not "max"'),
    ({"allow": "exec"}, "allow must be an array of capability names"),
    ({"session": {"id": "x"}}, 'session takes "dir"'),
])
def test_a_bad_config_file_is_refused_naming_the_file(emulator, run_panto, write_config, settings, message):
    emu = emulator({"responses": [text_reply("never")]})
    path = write_config(settings)
    r = run_panto("-p", "x")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"panto: {path}: ")
    assert message in r.stderr
    assert emu.requests() == []


def test_a_config_file_that_is_not_json(emulator, run_panto, config_dir):
    (config_dir / "config.json").write_text("{nope")
    r = run_panto("-p", "x")
    assert r.returncode == 2
    assert r.stderr.startswith(f"panto: {config_dir / 'config.json'}: the file is not valid JSON")


def test_a_bad_flag_value_is_the_cores_diagnostic(emulator, run_panto):
    r = run_panto("--provider", "mistral", "-p", "x")
    assert r.returncode == 2
    assert r.stderr == 'panto: provider must be "anthropic", "openai", "openai-responses", "gemini" or "bedrock", not "mistral"\n'


def test_provider_openai_with_its_default_model(emulator, run_panto, write_config):
    emu = emulator({"responses": [text_reply("hi from openai")]})
    write_config({"model": "claude-file-model"})  # the file's model is for the file's provider
    r = run_panto("--provider", "openai", "-p", "x")
    assert (r.returncode, r.stdout) == (0, "hi from openai\n")
    req = emu.requests()[0]
    assert req["path"] == "/v1/chat/completions" and req["body"]["model"] == "gpt-4o"


def test_base_url_flag(emulator, run_panto, cli_env):
    emu = emulator({"responses": [text_reply("ok")]})
    cli_env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # wrong: the flag wins
    assert run_panto("--base-url", emu.url, "-p", "x").returncode == 0
    assert len(emu.requests()) == 1


# Project context.

def test_agents_md_files_from_the_directory_upward(emulator, run_panto, home, workdir, tmp_path):
    emu = emulator({"responses": [text_reply("ok")]})
    (tmp_path / "AGENTS.md").write_text("ABOVE HOME: never read\n")
    (home / "AGENTS.md").write_text("Home rules.\n")
    (workdir / "AGENTS.md").write_text("Project rules.\n")
    sub = workdir / "sub"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("Sub rules.\n")
    # --trust: the project's own AGENTS.md files are added once it is trusted (test_trust.py).
    assert run_panto("--trust", "--system", "Base prompt.", "-p", "x", cwd=sub).returncode == 0
    s = system_text(body(emu))
    assert s.startswith("Base prompt.\n\n# Project context")
    assert "ABOVE HOME" not in s
    order = [s.index(f"## {home / 'AGENTS.md'}\n\nHome rules."),
             s.index(f"## {workdir / 'AGENTS.md'}\n\nProject rules."),
             s.index(f"## {sub / 'AGENTS.md'}\n\nSub rules.")]
    assert order == sorted(order)


def test_claude_md_beside_agents_md_and_the_global_context_file(emulator, run_panto, home, workdir):
    emu = emulator({"responses": [text_reply("ok"), text_reply("ok")]})
    (home / ".config" / "panto").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "panto" / "AGENTS.md").write_text("Global rules.\n")
    (home / "CLAUDE.md").write_text("Home Claude rules.\n")
    (workdir / "AGENTS.md").write_text("Project rules: tabs.\n")
    (workdir / "CLAUDE.md").write_text("Project Claude rules: spaces.\n")
    assert run_panto("--trust", "--system", "Base prompt.", "-p", "x").returncode == 0
    s = system_text(body(emu))
    # The global file first (outermost), then each folder's CLAUDE.md before its AGENTS.md:
    # AGENTS.md, read later, wins a conflict.
    order = [s.index(f"## {home / '.config' / 'panto' / 'AGENTS.md'}\n\nGlobal rules."),
             s.index(f"## {home / 'CLAUDE.md'}\n\nHome Claude rules."),
             s.index(f"## {workdir / 'CLAUDE.md'}\n\nProject Claude rules: spaces."),
             s.index(f"## {workdir / 'AGENTS.md'}\n\nProject rules: tabs.")]
    assert order == sorted(order)
    # Untrusted (print mode without --trust goes on without them): the project's files are
    # left out, the global one is the user's own and stays.
    other = workdir.parent / "other"
    other.mkdir()
    (other / ".git").mkdir()
    (other / "CLAUDE.md").write_text("Untrusted Claude rules.\n")
    r = run_panto("--system", "Base prompt.", "-p", "x", cwd=other)
    assert r.returncode == 0 and "CLAUDE.md" in r.stderr
    s = system_text(emu.requests()[1]["body"])
    assert "Global rules." in s and "Untrusted Claude rules." not in s


# The default system prompt (system_prompt.zig).

def test_the_default_system_prompt_says_where_when_and_which_tools(emulator, run_panto, workdir):
    emu = emulator({"responses": [text_reply("ok")]})
    before = datetime.datetime.now(datetime.timezone.utc).date()
    assert run_panto("--tools", "read,bash", "-p", "x").returncode == 0
    after = datetime.datetime.now(datetime.timezone.utc).date()
    b = body(emu)
    s = system_text(b)
    assert s.startswith("You are panto, a coding agent")
    assert f"Working directory: {workdir}\n" in s
    assert f"OS: {platform.system()} {platform.release()} {platform.machine()}\n" in s
    assert any(f"Date: {d.isoformat()} (UTC)" in s for d in (before, after))
    # Each tool the request offers, with how to use it; none it does not offer.
    offered = [t["name"] for t in b["tools"]]
    assert offered == ["read", "bash"]
    assert "- read: read a file before" in s and "- bash: run commands" in s
    assert "- write" not in s and "- edit" not in s


def test_agents_md_files_come_after_the_default_system_prompt(emulator, run_panto, workdir):
    emu = emulator({"responses": [text_reply("ok")]})
    (workdir / "AGENTS.md").write_text("Project rules.\n")
    assert run_panto("--trust", "-p", "x").returncode == 0
    s = system_text(body(emu))
    assert s.startswith("You are panto") and s.index("Working directory:") < s.index("# Project context")
    assert s.endswith("Project rules.\n") or s.rstrip().endswith("Project rules.")


def test_a_given_system_prompt_replaces_the_default(emulator, run_panto, write_config):
    emu = emulator({"responses": [text_reply("ok")], "repeat_last": True})
    assert run_panto("--system", "Be brief.", "-p", "x").returncode == 0
    assert system_text(body(emu)) == "Be brief."
    write_config({"system": "From the file."})
    assert run_panto("-p", "x").returncode == 0
    assert system_text(body(emu, 1)) == "From the file."
    # An empty one: no system prompt at all.
    assert run_panto("--system", "", "-p", "x").returncode == 0
    assert system_text(body(emu, 2)) == ""


# Tools.

def tool_names(b: dict[str, Any]) -> list[str]:
    return [t["name"] for t in b.get("tools", [])]


def test_read_is_offered_and_runs_under_the_working_directory(emulator, run_panto, workdir):
    (workdir / "notes.txt").write_text("the secret is 42\n")
    emu = emulator({"responses": [tool_reply("read", {"path": "notes.txt"}), text_reply("It is 42.")]})
    r = run_panto("-p", "What is the secret?")
    assert (r.returncode, r.stdout) == (0, "It is 42.\n")
    assert tool_names(body(emu)) == ["read", "write", "edit", "bash"]
    results = [p for m in body(emu, 1)["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for p in m["content"] if p["type"] == "tool_result"]
    assert len(results) == 1 and "the secret is 42" in json.dumps(results[0]["content"])


def test_tools_flag_limits_what_is_offered(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("--tools", "bash", "--allow", "exec", "-p", "x").returncode == 0
    assert tool_names(body(emu)) == ["bash"]


def test_tools_flag_filters_extension_tools_too(emulator, run_panto, workdir):
    ext = workdir / "greet.lua"
    ext.write_text("""require("panto").ext.tool{name = "greet", description = "Greets.",
  handler = function() return "hi" end}
""")
    emu = emulator({"responses": [text_reply("ok")], "repeat_last": True})
    assert run_panto("-e", str(ext), "-p", "x").returncode == 0
    assert sorted(tool_names(body(emu))) == ["bash", "edit", "greet", "read", "write"]
    assert run_panto("-e", str(ext), "--tools", "read", "-p", "x").returncode == 0
    assert tool_names(body(emu, 1)) == ["read"]


def test_read_is_not_offered_when_fs_read_is_not_granted(emulator, run_panto, write_config):
    emu = emulator({"responses": [text_reply("ok"), text_reply("ok")], "repeat_last": True})
    write_config({"allow": []})
    assert run_panto("-p", "x").returncode == 0
    assert tool_names(body(emu)) == []
    assert run_panto("--allow", "fs.read", "-p", "x").returncode == 0
    assert tool_names(body(emu, 1)) == ["read"]


def test_json_shows_the_tool_round(emulator, run_panto, workdir):
    (workdir / "a.txt").write_text("A\n")
    emulator({"responses": [tool_reply("read", {"path": "a.txt"}, id="toolu_9"), text_reply("done")]})
    r = run_panto("--json", "--no-session", "-p", "x")
    assert r.returncode == 0
    got = lines(r.stdout)
    call = next(e for e in got if e["event"] == "tool_call_start")
    assert call == {"event": "tool_call_start", "id": "toolu_9", "name": "read", "input": {"path": "a.txt"},
                    "awaiting_result": False}
    result = next(e for e in got if e["event"] == "tool_result")
    assert result["id"] == "toolu_9" and result["is_error"] is False and "A" in result["content"]
    assert got[-1] == {"event": "done"}


# Adaptive thinking.

UNSUPPORTED = "claude-test does not support thinking"


def thinking_of(b: dict[str, Any]) -> Any:
    return b.get("thinking")


def test_thinking_not_supported_steps_down_and_reopens(emulator, run_panto, write_config):
    write_config(NO_RETRY)
    emu = emulator({"responses": [error_reply("invalid_request_error", UNSUPPORTED),
                                  text_reply("Answer")]})
    r = run_panto("--model", "claude-test", "--thinking", "high", "-p", "Question")
    assert (r.returncode, r.stdout) == (0, "Answer\n")
    assert r.stderr == "panto: thinking high is not supported by claude-test: trying medium\n"
    reqs = emu.requests()
    assert [thinking_of(q["body"]) for q in reqs] == [
        {"type": "enabled", "budget_tokens": 16384}, {"type": "enabled", "budget_tokens": 8192}]
    # The same turn again: one user message, not two.
    assert user_texts(reqs[1]["body"]) == ["Question"]


def test_thinking_fallback_gives_up_at_off(emulator, run_panto, write_config):
    write_config(NO_RETRY)
    emu = emulator({"responses": [error_reply("invalid_request_error", UNSUPPORTED)], "repeat_last": True})
    r = run_panto("--json", "--no-session", "--model", "claude-test", "--thinking", "minimal", "-p", "x")
    assert r.returncode == 6
    got = lines(r.stdout)
    assert got == [
        {"event": "note", "text": "thinking minimal is not supported by claude-test: trying off"},
        {"event": "error", "code": "invalid_request", "http_status": 400, "type": "invalid_request_error",
         "message": UNSUPPORTED},
    ]
    assert [thinking_of(q["body"]) for q in emu.requests()] == [{"type": "enabled", "budget_tokens": 1024}, None]


def test_thinking_the_catalog_says_a_model_lacks_steps_down_without_a_request(emulator, run_panto, write_config):
    # gpt-4o-mini does not think by the model catalog: the core refuses each level before any
    # request (a config error), and the fallback lowers it to off, which is sent.
    write_config(NO_RETRY)
    emu = emulator({"responses": [text_reply("Answer")]})
    r = run_panto("--provider", "openai", "--model", "gpt-4o-mini", "--thinking", "low", "-p", "Question")
    assert (r.returncode, r.stdout) == (0, "Answer\n")
    assert r.stderr == ("panto: thinking low is not supported by gpt-4o-mini: trying minimal\n"
                        "panto: thinking minimal is not supported by gpt-4o-mini: trying off\n")
    reqs = emu.requests()
    assert len(reqs) == 1 and "reasoning_effort" not in reqs[0]["body"]


def test_another_invalid_request_is_not_retried(emulator, run_panto, write_config):
    write_config(NO_RETRY)
    emu = emulator({"responses": [error_reply("invalid_request_error", "max_tokens: too large")]})
    r = run_panto("--thinking", "high", "-p", "x")
    assert r.returncode == 6 and len(emu.requests()) == 1


# Cancel.

def test_sigint_cancels_the_turn_keeping_the_partial_answer(emulator, start_panto):
    words = " ".join(f"w{i}" for i in range(200))
    emulator({"responses": [{"message": {"content": [{"type": "text", "text": words}]},
                             "chunk_delay_ms": 100}]})
    p = start_panto("-p", "tell me")
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    p.stdin.close()
    first = p.stdout.read(3)  # blocks until the answer has begun
    assert first == b"w0 "
    p.send_signal(signal.SIGINT)
    rest = p.stdout.read()
    err = p.stderr.read().decode()
    assert p.wait(timeout=30) == 130
    out = (first + rest).decode()
    assert words.startswith(out.rstrip("\n")) and len(out) < len(words)
    assert out.endswith("\n")
    assert err == "panto: canceled\n"


def test_sigint_before_the_answer_begins_cancels_and_json_says_so(emulator, start_panto):
    import time
    emu = emulator({"responses": [{"message": {"content": [{"type": "text", "text": "late"}]}, "delay_ms": 20000}]})
    p = start_panto("--json", "--no-session", "-p", "x")
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    p.stdin.close()
    deadline = time.monotonic() + 30
    while not emu.requests():  # the request is out: the turn's stream is waiting for the head
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    out, err = p.stdout.read().decode(), p.stderr.read().decode()
    assert p.wait(timeout=30) == 130
    assert lines(out) == [{"event": "error", "code": "canceled", "http_status": 0, "type": "canceled_error",
                           "message": "the turn was canceled"}]
    assert err == "panto: canceled\n"


def test_stdout_closed_early_cancels(emulator, panto_bin, cli_env, workdir):
    words = " ".join(f"w{i}" for i in range(200))
    emulator({"responses": [{"message": {"content": [{"type": "text", "text": words}]}, "chunk_delay_ms": 20}]})
    p = subprocess.Popen([str(panto_bin), "-p", "x"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=workdir, env=cli_env)
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.read(3) == b"w0 "
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(timeout=30)
    # Either the write fails (EPIPE) and the turn is canceled, or SIGPIPE ends the process.
    assert rc in (1, -signal.SIGPIPE)
    if rc == 1:
        assert err == "panto: stdout was closed: the turn was canceled\n"


# The turn's end as extensions see it (ext.on "turn_end"; the other events: test_extensions.py).

def test_ext_on_turn_end_says_the_error_of_a_failed_turn(emulator, run_panto, write_config, workdir):
    write_config(NO_RETRY)
    log = workdir / "end.jsonl"
    ext = workdir / "end.lua"
    ext.write_text(f"""local panto = require("panto")
panto.ext.on("turn_end", function(data)
  local out = io.open({str(log)!r}, "a")
  out:write(panto.json_encode(data), "\\n")
  out:close()
end)
""")
    emulator({"responses": [error_reply("rate_limit_error", "Slow down"), text_reply("fine")]})
    assert run_panto("-e", str(ext), "-p", "x").returncode == 4
    assert run_panto("-e", str(ext), "-p", "y").returncode == 0
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"error": "rate_limit", "message": "Slow down"},
        {"stop_reason": "end_turn"},
    ]


# A piped image (issue 35): sent as an image part, not as text.

def piped_png() -> bytes:
    import io
    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (8, 6), (10, 200, 30)).save(out, "PNG")
    return out.getvalue()


def test_a_piped_png_is_sent_as_an_image_after_the_prompt(emulator, panto_bin, cli_env, workdir):
    import base64
    emu = emulator({"responses": [text_reply("A green square."), text_reply("Still green.")]})
    png = piped_png()
    r = subprocess.run([str(panto_bin), "-p", "what is this"], input=png, capture_output=True,
                       cwd=workdir, env=cli_env, timeout=RUN_TIMEOUT)
    assert (r.returncode, r.stdout) == (0, b"A green square.\n"), r.stderr
    [text, image] = emu.requests()[0]["body"]["messages"][-1]["content"]
    assert text == {"type": "text", "text": "what is this"}
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == png
    # Without words: the image alone.
    r = subprocess.run([str(panto_bin), "-p"], input=png, capture_output=True, cwd=workdir,
                       env=cli_env, timeout=RUN_TIMEOUT)
    assert r.returncode == 0, r.stderr
    [image] = emu.requests()[1]["body"]["messages"][-1]["content"]
    assert image["type"] == "image" and base64.b64decode(image["source"]["data"]) == png


def test_piped_text_that_starts_like_a_bmp_stays_text(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("-p", "review", input="BM is a tag\n").returncode == 0
    [text] = emu.requests()[0]["body"]["messages"][-1]["content"]
    assert (text["type"], text["text"]) == ("text", "review\n\nBM is a tag\n")
