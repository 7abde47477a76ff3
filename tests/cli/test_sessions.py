"""Sessions of the command: every run keeps one (the core's session store) unless told not
to; --continue resumes the newest of the working directory, --session ID an existing one (by
its id or a unique prefix), --new-session ID starts one under that id."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import text_reply


def sessions_dir(home: Path) -> Path:
    return home / ".local" / "share" / "panto" / "sessions"


def session_files(d: Path) -> list[Path]:
    return sorted(d.glob("*.jsonl")) if d.is_dir() else []


def roles(b: dict[str, Any]) -> list[str]:
    return [m["role"] for m in b["messages"]]


def first_line(stdout: str) -> dict[str, Any]:
    return json.loads(stdout.splitlines()[0])


def test_a_run_keeps_a_new_session(emulator, run_panto, home):
    emulator({"responses": [text_reply("one"), text_reply("two")]})
    r1 = run_panto("--json", "-p", "first")
    r2 = run_panto("--json", "-p", "second")
    s1, s2 = first_line(r1.stdout), first_line(r2.stdout)
    assert s1["event"] == s2["event"] == "session"
    assert s1["id"] != s2["id"] and not s1["resumed"] and not s2["resumed"]
    assert [p.stem for p in session_files(sessions_dir(home))] == sorted([s1["id"], s2["id"]])


def test_continue_resumes_the_newest_session_of_this_directory(emulator, run_panto):
    emu = emulator({"responses": [text_reply("one"), text_reply("two"), text_reply("three")]})
    assert run_panto("-p", "first").returncode == 0
    r = run_panto("--json", "-p", "second")
    newest = first_line(r.stdout)["id"]
    c = run_panto("--continue", "--json", "-p", "third")
    assert c.returncode == 0
    info = first_line(c.stdout)
    assert (info["id"], info["resumed"], info["message_count"]) == (newest, True, 2)
    # The request carries the resumed conversation: second's turn, then the new one.
    b = emu.requests()[2]["body"]
    assert roles(b) == ["user", "assistant", "user"]
    assert b["messages"][1]["content"][0]["text"] == "two"


def test_continue_takes_only_sessions_of_this_directory(emulator, run_panto, workdir, home):
    emulator({"responses": [text_reply("a"), text_reply("b"), text_reply("c")]})
    other = home / "elsewhere"
    other.mkdir()
    mine = first_line(run_panto("--json", "-p", "here").stdout)["id"]
    assert run_panto("-p", "there", cwd=other).returncode == 0  # newer, but elsewhere
    c = run_panto("-c", "--json", "-p", "again")
    assert first_line(c.stdout)["id"] == mine


def test_continue_without_a_session_is_a_usage_error(emulator, run_panto, workdir, home):
    emu = emulator({"responses": [text_reply("never")]})
    r = run_panto("--continue", "-p", "x")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"panto: no session to continue in {workdir} (sessions: {sessions_dir(home)})\n"
    assert emu.requests() == []


def test_new_session_starts_a_named_session_and_session_resumes_it(emulator, run_panto, home):
    emu = emulator({"responses": [text_reply("one"), text_reply("two")]})
    r1 = run_panto("--new-session", "work-1", "--json", "-p", "first")
    assert first_line(r1.stdout) == {"event": "session", "id": "work-1", "resumed": False, "message_count": 0}
    r2 = run_panto("--session", "work-1", "--json", "-p", "second")
    assert first_line(r2.stdout) == {"event": "session", "id": "work-1", "resumed": True, "message_count": 2}
    assert roles(emu.requests()[1]["body"]) == ["user", "assistant", "user"]
    assert [p.name for p in session_files(sessions_dir(home))] == ["work-1.jsonl"]


def test_a_failed_run_leaves_no_user_message_for_continue(emulator, run_panto, cli_env):
    # Issue 35, bug 3: a run that fails before any answer (no API key: the provider refuses
    # it) must not leave its user message in the session, or -c sends two user messages in a
    # row.
    emu = emulator({"responses": [text_reply("hello")]})
    failed = run_panto("-p", "hi", env={**cli_env, "ANTHROPIC_API_KEY": ""})
    assert failed.returncode == 3, failed.stderr  # authentication
    c = run_panto("-c", "--json", "-p", "again")
    assert c.returncode == 0, c.stderr
    assert first_line(c.stdout)["message_count"] == 0
    b = emu.requests()[-1]["body"]
    assert roles(b) == ["user"]
    assert b["messages"][0]["content"][0]["text"] == "again"


def test_a_bad_session_id_is_the_cores_diagnostic(emulator, run_panto):
    for option in ("--session", "--new-session"):
        r = run_panto(option, "../x", "-p", "x")
        assert r.returncode == 2
        assert r.stderr.startswith("panto: session.id must be 1 to 128 of")


def test_no_session_keeps_no_file(emulator, run_panto, home):
    emulator({"responses": [text_reply("one")]})
    r = run_panto("--no-session", "--json", "-p", "x")
    assert r.returncode == 0 and first_line(r.stdout)["event"] == "message_start"
    assert session_files(sessions_dir(home)) == []


def test_config_session_false_and_dir(emulator, run_panto, write_config, home, tmp_path):
    emulator({"responses": [text_reply("one"), text_reply("two")]})
    write_config({"session": False})
    assert run_panto("-p", "x").returncode == 0
    assert session_files(sessions_dir(home)) == []
    elsewhere = tmp_path / "kept"
    write_config({"session": {"dir": str(elsewhere), "fsync": False}})
    r = run_panto("--json", "-p", "x")
    assert [p.stem for p in session_files(elsewhere)] == [first_line(r.stdout)["id"]]


def test_xdg_data_home_holds_the_sessions(emulator, run_panto, cli_env, tmp_path):
    emulator({"responses": [text_reply("one")]})
    data = tmp_path / "data"
    cli_env["XDG_DATA_HOME"] = str(data)
    r = run_panto("--json", "-p", "x")
    assert [p.stem for p in session_files(data / "panto" / "sessions")] == [first_line(r.stdout)["id"]]


def test_a_session_in_use_is_refused(emulator, run_panto, start_panto):
    """A second run on a session another run holds fails at once, exit 2, with the core's words."""
    words = " ".join(f"w{i}" for i in range(100))
    emulator({"responses": [{"message": {"content": [{"type": "text", "text": words}]}, "chunk_delay_ms": 100}]})
    p = start_panto("--new-session", "busy", "-p", "long")
    assert p.stdin is not None and p.stdout is not None
    p.stdin.close()
    assert p.stdout.read(3) == b"w0 "  # the first run holds the session now
    r = run_panto("--session", "busy", "-p", "x")
    p.kill()
    p.wait()
    assert r.returncode == 2
    assert r.stderr == "panto: session busy is open in another agent\n"


def test_a_session_folder_that_cannot_be_made_is_a_usage_error(emulator, run_panto, write_config, tmp_path):
    emu = emulator({"responses": [text_reply("never")]})
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    write_config({"session": {"dir": str(blocker / "sessions")}})
    r = run_panto("-p", "x")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"panto: the session directory {blocker / 'sessions'} could not be made\n"
    assert emu.requests() == []


def test_resuming_keeps_the_sessions_provider_model_and_thinking(emulator, run_panto, write_config):
    """The session records provider, model and thinking; resuming it (--session, -c) goes on
    with them, over the config file's (the session is more specific); flags still win. (Models
    that think, by the model catalog: for one that does not, thinking is refused before any
    request and lowered to off.)"""
    emu = emulator({"responses": [text_reply(t) for t in ("one", "two", "three", "four")]})
    write_config({"model": "claude-sonnet-4-5", "thinking": "high"})
    assert run_panto("--new-session", "s1", "--provider", "openai", "--model", "gpt-5",
                     "--thinking", "low", "-p", "one").returncode == 0
    assert run_panto("--session", "s1", "-p", "two").returncode == 0
    assert run_panto("-c", "-p", "three").returncode == 0
    assert run_panto("--session", "s1", "--model", "gpt-5-mini", "--thinking", "minimal", "-p", "four").returncode == 0
    reqs = emu.requests()
    for r in reqs[:3]:
        assert r["path"] == reqs[0]["path"] and "/messages" not in r["path"]
        assert (r["body"]["model"], r["body"]["reasoning_effort"]) == ("gpt-5", "low")
    assert (reqs[3]["body"]["model"], reqs[3]["body"]["reasoning_effort"]) == ("gpt-5-mini", "minimal")
    # (OpenAI's messages start with the system prompt's.)
    assert roles(reqs[3]["body"]) == ["system"] + ["user", "assistant"] * 3 + ["user"]


def test_another_provider_on_resume_takes_its_own_default_model(emulator, run_panto):
    emu = emulator({"responses": [text_reply("one"), text_reply("two")]})
    assert run_panto("--new-session", "s1", "--provider", "openai", "--model", "gpt-4.1", "-p", "one").returncode == 0
    assert run_panto("--session", "s1", "--provider", "anthropic", "-p", "two").returncode == 0
    second = emu.requests()[1]
    assert second["path"].endswith("/messages") and second["body"]["model"] == "claude-sonnet-4-5"


def test_a_session_id_that_matches_none_is_refused(emulator, run_panto, home):
    emu = emulator({"responses": [text_reply("one")]})
    assert run_panto("--new-session", "work-1", "-p", "first").returncode == 0
    r = run_panto("--session", "wrok-1", "-p", "x")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f'panto: no session "wrok-1" in {sessions_dir(home)} (did you mean "work-1"?); '
                        "--new-session wrok-1 starts one under that id\n")
    assert len(emu.requests()) == 1
    assert [p.name for p in session_files(sessions_dir(home))] == ["work-1.jsonl"]


def test_a_unique_prefix_opens_that_session(emulator, run_panto):
    emu = emulator({"responses": [text_reply("one"), text_reply("two")]})
    first = first_line(run_panto("--json", "-p", "first").stdout)["id"]
    r = run_panto("--session", first[:10], "--json", "-p", "second")
    assert r.returncode == 0, r.stderr
    assert first_line(r.stdout) == {"event": "session", "id": first, "resumed": True, "message_count": 2}
    assert roles(emu.requests()[1]["body"]) == ["user", "assistant", "user"]


def test_an_ambiguous_prefix_lists_the_candidates(emulator, run_panto):
    emu = emulator({"responses": [text_reply("a"), text_reply("b")]})
    assert run_panto("--new-session", "task-a", "-p", "x").returncode == 0
    assert run_panto("--new-session", "task-b", "-p", "x").returncode == 0
    r = run_panto("--session", "task", "-p", "x")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == 'panto: session "task" is ambiguous: task-a, task-b\n'
    assert len(emu.requests()) == 2


def test_new_session_refuses_an_id_taken(emulator, run_panto, home):
    emu = emulator({"responses": [text_reply("a")]})
    assert run_panto("--new-session", "mine", "-p", "x").returncode == 0
    r = run_panto("--new-session", "mine", "-p", "x")
    assert r.returncode == 2
    assert r.stderr == f"panto: session mine already exists in {sessions_dir(home)}\n"
    assert len(emu.requests()) == 1


def test_sessions_lists_this_folders_sessions_newest_first(emulator, run_panto, workdir, home):
    emulator({"responses": [text_reply("a"), text_reply("b"), text_reply("c"), text_reply("d")]})
    older = first_line(run_panto("--json", "-p", "fix the build\nand then the tests").stdout)["id"]
    other = home / "elsewhere"
    other.mkdir()
    assert run_panto("-p", "a question elsewhere", cwd=other).returncode == 0
    newer = first_line(run_panto("--json", "-p", "write the changelog").stdout)["id"]
    assert run_panto("--session", newer, "-p", "and the docs").returncode == 0

    r = run_panto("sessions")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "(UTC)", "MSGS", "FIRST", "PROMPT"]
    rows = [line.split(None, 4) for line in lines[1:]]
    # This folder's two, the one resumed last first; the prompt's first line only.
    assert [(row[0], row[3], row[4]) for row in rows] == [
        (newer, "4", "write the changelog"), (older, "2", "fix the build")]

    listed = run_panto("sessions", "--all")
    assert listed.returncode == 0
    assert "FOLDER" in listed.stdout.splitlines()[0]
    assert len(listed.stdout.splitlines()) == 4
    assert "~/elsewhere  a question elsewhere" in listed.stdout

    j = run_panto("sessions", "--json")
    data = json.loads(j.stdout)
    assert [(s["id"], s["message_count"], s["cwd"]) for s in data] == [
        (newer, 4, str(workdir)), (older, 2, str(workdir))]
    assert data[1]["first_user_text"] == "fix the build\nand then the tests"


def test_sessions_with_none_kept_says_so(run_panto, home):
    r = run_panto("sessions")
    assert (r.returncode, r.stdout) == (0, "")
    assert "no session kept for" in r.stderr and "--all" in r.stderr
    assert run_panto("sessions", "--json").stdout.strip() == "[]"


def test_sessions_refuses_other_options_and_a_prompt_goes_after_p(emulator, run_panto, home):
    r = run_panto("sessions", "--model", "x")
    assert r.returncode == 2
    assert "panto sessions takes --all and --json, not --model" in r.stderr
    emu = emulator({"responses": [text_reply("fine")]})
    asked = run_panto("-p", "sessions")
    assert (asked.returncode, asked.stdout.strip()) == (0, "fine")
    assert emu.requests()[0]["body"]["messages"][0]["content"][0]["text"] == "sessions"
