"""Names the user gives that do not exist (a tool, a capability, an option's value that is
another option, a base URL that is not one, an extension file): a usage error, exit 2, that
names the bad value and the valid ones or the nearest, before any request; never a silent
drop."""
from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import text_reply


def refused(emulator: Any, run_panto: Any, *args: str) -> str:
    """Runs `panto ARGS -p x`, which must fail as a usage error before any request; the
    stderr."""
    emu = emulator({"responses": [text_reply("never")]})
    r = run_panto(*args, "-p", "x")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert emu.requests() == []
    return r.stderr


# ---- --tools, "tools" ----

def test_an_unknown_tool_is_refused(emulator, run_panto):
    assert refused(emulator, run_panto, "--tools", "nope") == (
        'panto: --tools: unknown tool "nope"; the tools: read, write, edit, bash\n')


def test_a_misspelt_tool_in_a_list_is_refused_with_the_nearest(emulator, run_panto):
    assert refused(emulator, run_panto, "--tools", "read,bsh") == (
        'panto: --tools: unknown tool "bsh" (did you mean "bash"?); the tools: read, write, edit, bash\n')


def test_an_extensions_tool_is_a_known_name(emulator, run_panto, workdir):
    ext = workdir / "greet.lua"
    ext.write_text('require("panto").ext.tool{name = "greet", description = "Greets.", handler = function() return "hi" end}\n')
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("-e", str(ext), "--tools", "greet", "-p", "x").returncode == 0
    assert [t["name"] for t in emu.requests()[0]["body"]["tools"]] == ["greet"]
    assert refused(emulator, run_panto, "-e", str(ext), "--tools", "gret").startswith(
        'panto: --tools: unknown tool "gret" (did you mean "greet"?); the tools: read, write, edit, bash, greet')


def test_a_tool_whose_capability_is_not_granted_says_which_it_needs(emulator, run_panto, write_config):
    write_config({"allow": ["fs.read"]})  # (the default grants write and exec too)
    assert refused(emulator, run_panto, "--tools", "bash") == (
        "panto: --tools: bash needs the capability exec: grant it with --allow exec\n")
    assert refused(emulator, run_panto, "--tools", "read,write") == (
        "panto: --tools: write needs the capability fs.write: grant it with --allow fs.write\n")


def test_the_config_files_tools_are_checked_too(emulator, run_panto, write_config):
    path = write_config({"tools": ["read", "bsh"]})
    assert refused(emulator, run_panto) == (
        f'panto: {path}: tools: unknown tool "bsh" (did you mean "bash"?); the tools: read, write, edit, bash\n')


def test_tools_granted_and_named_are_offered(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("--tools", "bash, read", "--allow", "exec", "-p", "x").returncode == 0
    assert sorted(t["name"] for t in emu.requests()[0]["body"]["tools"]) == ["bash", "read"]


# ---- --allow, "allow" ----

def test_an_unknown_capability_is_refused(emulator, run_panto):
    assert refused(emulator, run_panto, "--allow", "nope") == (
        'panto: --allow: unknown capability "nope"; the capabilities: fs.read, fs.write, exec\n')
    assert refused(emulator, run_panto, "--allow", "fs.write,exce") == (
        'panto: --allow: unknown capability "exce" (did you mean "exec"?); the capabilities: fs.read, fs.write, exec\n')


def test_the_config_files_allow_is_checked(emulator, run_panto, write_config):
    path = write_config({"allow": ["fs.read", "fs.wrte"]})
    assert refused(emulator, run_panto) == (
        f'panto: {path}: allow: unknown capability "fs.wrte" (did you mean "fs.write"?); the capabilities: fs.read, fs.write, exec\n')


def test_an_extensions_capability_is_a_known_name(emulator, run_panto, workdir):
    ext = workdir / "net.lua"
    ext.write_text('require("panto").ext.tool{name = "fetch", description = "Fetches.", capabilities = {"net"}, handler = function() return "x" end}\n')
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("-e", str(ext), "--allow", "net", "-p", "x").returncode == 0
    assert "fetch" in [t["name"] for t in emu.requests()[0]["body"]["tools"]]


# ---- -e FILE ----

def test_a_missing_extension_file_is_an_error(emulator, run_panto, workdir):
    assert refused(emulator, run_panto, "-e", "nope.lua") == "panto: -e nope.lua: no such file\n"
    assert refused(emulator, run_panto, "-e", str(workdir)) == f"panto: -e {workdir}: is a directory, not a Lua file\n"


# ---- an option's value ----

def test_an_options_value_that_is_another_option_is_refused(emulator, run_panto):
    stderr = refused(emulator, run_panto, "--model", "-p", "hi")
    assert stderr.startswith('panto: --model needs a value, not the option -p (write --model=-p for a value that starts with "-")\nusage: panto')


def test_a_value_that_starts_with_a_dash_goes_with_equals(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    assert run_panto("--model=-odd", "--system", "- be brief", "-p", "x").returncode == 0
    b = emu.requests()[0]["body"]
    assert b["model"] == "-odd" and "- be brief" in json.dumps(b["system"])


# ---- a base URL ----

@pytest.mark.parametrize("url, message", [
    ("notaurl", 'ANTHROPIC_BASE_URL "notaurl" is not a URL'),
    ("localhost:8080", "ANTHROPIC_BASE_URL must start with http:// or https://"),
])
def test_a_base_url_from_the_environment_that_is_not_one_fails_at_once(emulator, run_panto, cli_env, url, message):
    emu = emulator({"responses": [text_reply("never")]})
    cli_env["ANTHROPIC_BASE_URL"] = url
    r = run_panto("-p", "x")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"panto: {message}\n")
    assert emu.requests() == []
