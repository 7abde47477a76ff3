"""`--resume` (a picker of this folder's sessions) and `/name` (issue 35): the picker runs in a
tmux pane (test_interactive.py's Pane), the sessions made beforehand in print mode."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import text_reply
from test_interactive import Pane, last_user_text, pane  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def make_session(run_panto, prompt: str) -> str:
    r = run_panto("--json", "-p", prompt)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[0])["id"]


def picker(panto_bin: Path, cli_env, workdir: Path, tmp_path: Path, *args: str) -> Pane:
    """`panto --resume` in a pane, not waiting for the prompt (the picker comes first)."""
    return Pane([str(panto_bin), "--resume", *args], cli_env, workdir, tmp_path)


def test_resume_picks_a_session_newest_first_and_resumes_it(emulator, run_panto, panto_bin, cli_env, workdir, tmp_path):
    emu = emulator({"responses": [text_reply("About apples."), text_reply("About pears."), text_reply("More apples.")]})
    first = make_session(run_panto, "first topic: apples")
    make_session(run_panto, "second topic: pears")
    p = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        screen = p.wait_for("Resume a session")
        # Newest first, the first prompt and the message count shown.
        assert screen.index("second topic: pears") < screen.index("first topic: apples")
        assert "     2  first topic: apples" in screen
        p.keys("Down", "Enter")
        screen = p.wait_for(f"resumed session {first} (2 messages)")
        assert "Resume a session" not in screen  # the list was taken off
        assert "> first topic: apples" in screen and "About apples." in screen
        p.type("go on")
        p.wait_for("More apples.")
        body = emu.requests()[2]["body"]
        assert "first topic: apples" in json.dumps(body["messages"][0])
        assert last_user_text(emu.requests()[2]) == "go on"
        p.type("/quit")
        assert p.exit_status() == 0
    finally:
        p.close()


def test_esc_leaves_the_picker_and_panto(emulator, run_panto, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": [text_reply("ok")]})
    make_session(run_panto, "only one")
    p = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        p.wait_for("only one")
        p.keys("Escape")
        assert p.exit_status() == 0
        assert "/help for commands" not in p.screen()
    finally:
        p.close()


def test_resume_with_no_session_here_or_no_terminal_is_a_usage_error(emulator, run_panto, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": []})
    r = run_panto("--resume")
    assert r.returncode == 2 and "--resume picks a session on a terminal" in r.stderr
    assert run_panto("--resume", "-p", "x").returncode == 2
    p = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        assert p.exit_status() == 2
        assert "no session to resume in" in p.screen()
    finally:
        p.close()


def test_name_names_the_session_and_the_lists_show_it(emulator, run_panto, pane, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": [text_reply("Hello.")]})
    p = pane()
    p.type("/name")
    p.wait_for("has no name (/name TEXT names it)")
    p.type("hi there")
    p.wait_for("Hello.")
    p.type("/name build fix")
    p.wait_for("named: build fix")
    p.type("/quit")
    assert p.exit_status() == 0
    listed = run_panto("sessions")
    assert "[build fix] hi there" in listed.stdout
    [entry] = json.loads(run_panto("sessions", "--json").stdout)
    assert entry["name"] == "build fix"
    q = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        q.wait_for("[build fix] hi there")
        q.keys("Enter")
        q.wait_for("resumed session")
        q.type("/name")
        q.wait_for(": build fix")
    finally:
        q.close()


def test_name_without_a_session_says_so(emulator, pane):
    emulator({"responses": []})
    p = pane("--no-session")
    p.type("/name x")
    p.wait_for("/name: no session (--no-session): nothing to name")


def test_resume_inside_a_run_goes_on_in_the_picked_session_with_its_model(emulator, run_panto, pane):
    emu = emulator({"responses": [text_reply("About apples."), text_reply("Hi."), text_reply("More apples.")]})
    r = run_panto("--new-session", "apples-1", "--provider", "openai", "--model", "gpt-5",
                  "--thinking", "low", "-p", "first topic: apples")
    assert r.returncode == 0, r.stderr
    p = pane()
    p.type("something else")
    p.wait_for("Hi.")
    mark = p.mark()
    screen = p.command("/resume", "Resume a session")
    # The run's own session is not offered.
    assert "first topic: apples" in screen and "something else" not in screen
    p.keys("Enter")
    screen = p.wait_for("resumed session apples-1 (2 messages)", after=mark)
    assert "> first topic: apples" in screen and "About apples." in screen
    assert "model gpt-5 (openai), thinking low" in screen
    p.type("go on")
    p.wait_for("More apples.")
    third = emu.requests()[2]
    # The session's provider, model and thinking, and its conversation (not the run's first).
    assert "/messages" not in third["path"]
    assert (third["body"]["model"], third["body"]["reasoning_effort"]) == ("gpt-5", "low")
    sent = json.dumps(third["body"]["messages"])
    assert "first topic: apples" in sent and "something else" not in sent
    p.command("/session", "session apples-1 (resumed)")
    listed = run_panto("sessions").stdout
    assert "something else" in listed  # the session left is kept


def test_resume_by_id_and_its_refusals_leave_the_run_where_it_was(emulator, run_panto, pane):
    emu = emulator({"responses": [text_reply("one"), text_reply("Hi."), text_reply("two")]})
    assert run_panto("--new-session", "work-1", "-p", "first").returncode == 0
    p = pane("--new-session", "here-1")
    p.type("hello")
    p.wait_for("Hi.")
    p.command("/resume wrok-1", '/resume: no session "wrok-1"')
    p.command("/resume here-1", "already in session here-1")
    p.type("still here")
    p.wait_for("two")
    sent = json.dumps(emu.requests()[2]["body"]["messages"])
    assert "hello" in sent and "first" not in sent
    p.command("/resume work", "resumed session work-1 (2 messages)")


def test_resume_with_no_other_session_says_so(emulator, pane, workdir):
    emulator({"responses": []})
    p = pane()
    p.type("/resume")
    p.wait_for(f"no other session to resume in {workdir}")


def test_tree_is_a_navigator_enter_resumes_the_row_picked(emulator, pane):
    emu = emulator({"responses": [text_reply("Noted: blue."), text_reply("Forked answer."),
                                  text_reply("Back on blue.")]})
    p = pane()
    p.type("My colour is blue")
    p.wait_for("Noted: blue.")
    p.command("/fork 0", "forked: session")
    p.type("Another question")
    p.wait_for("Forked answer.")
    mark = p.mark()
    p.command("/tree", "Fork tree")
    p.keys("Escape")
    # Left: the tree is written out, and the run stays in the fork.
    p.wait_for(lambda s: "Fork tree" not in s and "← this session" in s, after=mark)
    mark = p.mark()
    p.command("/tree", "Fork tree")
    p.keys("Up", "Enter")  # the fork is selected first: up is the root
    screen = p.wait_for("resumed session", after=mark)
    assert "> My colour is blue" in screen and "Noted: blue." in screen
    p.type("and now?")
    p.wait_for("Back on blue.")
    sent = json.dumps(emu.requests()[2]["body"]["messages"])
    assert "My colour is blue" in sent and "Another question" not in sent


def test_resume_by_id_with_sessions_off_is_refused(emulator, run_panto, pane, write_config):
    emulator({"responses": [text_reply("one")]})
    assert run_panto("--new-session", "kept-1", "-p", "first").returncode == 0
    write_config({"session": False})
    p = pane()
    p.command("/resume kept-1", '/resume: sessions are off ("session": false in the config file)')
    p.command("/session", "no session (--no-session)")
