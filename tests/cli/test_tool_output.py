"""Tool calls on the screen (tmux): an edit shows the diff of what it changed, a long result
is folded to a few lines and Ctrl-O shows the last one whole."""
from __future__ import annotations

from pathlib import Path

from conftest import text_reply, tool_reply
from test_interactive import pane  # noqa: F401  (the fixture)


def test_an_edit_shows_its_diff_colored(emulator, pane, workdir: Path):
    (workdir / "app.py").write_text("import os\n\ndef main():\n    print('hi')\n    return 0\n")
    emulator({"responses": [
        tool_reply("edit", {"path": "app.py", "old": "    print('hi')\n", "new": "    print('hello')\n    log()\n"}),
        text_reply("Edited."),
    ]})
    p = pane("--allow", "fs.write", "--yolo")
    mark = p.mark()
    p.type("Change the greeting")
    p.wait_for("Edited.", after=mark)
    screen = p.screen()[mark:]
    assert "    4 -     print('hi')" in screen
    assert "    4 +     print('hello')" in screen and "    5 +     log()" in screen
    colored = p.screen(escapes=True).splitlines()
    removed = next(line for line in colored if "print('hi')" in line and " - " in line)
    added = next(line for line in colored if "4 +     print('hello')" in line)
    assert "\x1b[31m" in removed and "\x1b[32m" in added, (removed, added)
    assert (workdir / "app.py").read_text().count("hello") == 1


def test_a_long_result_is_folded_and_ctrl_o_shows_it_whole(emulator, pane, workdir: Path):
    (workdir / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 21)))
    emulator({"responses": [tool_reply("read", {"path": "long.txt"}), text_reply("Read it."),
                            tool_reply("read", {"path": "long.txt"}, id="toolu_2"),
                            text_reply("Read it again, whole.")]})
    p = pane()
    mark = p.mark()
    p.type("Read long.txt")
    p.wait_for("Read it.", after=mark)
    screen = p.screen()[mark:]
    assert "row 3" in screen and "row 4" not in screen
    assert "… 17 more lines (Ctrl-O shows the whole result)" in screen
    mark = p.mark()
    p.keys("C-o")
    screen = p.wait_for("row 20", after=mark)
    assert "read, whole:" in screen and "row 4" in screen and "tool results shown whole" in screen
    # Later results come whole; Ctrl-O again folds them.
    mark = p.mark()
    p.type("Read it again")
    screen = p.wait_for("Read it again, whole.", after=mark)
    assert "row 20" in screen and "more lines" not in screen
    p.keys("C-o")
    p.wait_for("tool results folded", after=mark)


def test_bash_shows_its_last_lines_while_it_runs_then_its_result(emulator, pane, workdir: Path):
    # The command writes a line, then waits for a file the test makes once the line shows.
    command = ("echo step zero; echo compiling step one; echo step two; echo step three; "
               "while [ ! -e go ]; do sleep 0.05; done; echo linked")
    emulator({"responses": [tool_reply("bash", {"command": command}), text_reply("Built.")]})
    p = pane("--allow", "exec", "--yolo")
    mark = p.mark()
    p.type("Build it")
    # The last three lines, the first under the tool's name.
    live = p.wait_for(lambda s: "… bash: compiling step one" in s and "      step three" in s, after=mark)
    assert "      step two" in live and "… bash: step zero" not in live
    (workdir / "go").write_text("")
    screen = p.wait_for("Built.", after=mark)
    # The live line went with the result, whose folded lines show the output.
    assert "… bash: compiling" not in screen
    assert "↳ bash: 5 lines" in screen and "    linked" in screen


QUIET_EDIT = r"""
local ext = require('panto').ext
ext.tool{name = 'edit', description = 'Edits, and says only that.', capabilities = {'fs.write'},
  params = {path = {type = 'string'}, old = {type = 'string'}, new = {type = 'string'}},
  handler = function(input)
    local f = assert(io.open(input.path, 'rb')); local text = f:read('a'); f:close()
    local s, e = text:find(input.old, 1, true)
    f = assert(io.open(input.path, 'wb')); f:write(text:sub(1, s - 1), input.new, text:sub(e + 1)); f:close()
    return 'done'
  end}
"""


def test_an_edit_whose_result_names_no_line_is_numbered_from_the_file(emulator, pane, workdir: Path, config_dir: Path):
    # A user's edit tool (replacing the bundled one) says no "at line N": the diff's numbers
    # come from where the new text is in the file.
    (config_dir / "extensions").mkdir(exist_ok=True)
    (config_dir / "extensions" / "edit.lua").write_text(QUIET_EDIT)
    (workdir / "app.py").write_text("import os\n\n\ndef main():\n    print('hi')\n    return 0\n")
    emulator({"responses": [
        tool_reply("edit", {"path": "app.py", "old": "    print('hi')\n", "new": "    print('hello')\n"}),
        text_reply("Edited."),
    ]})
    p = pane("--allow", "fs.write", "--yolo")
    mark = p.mark()
    p.type("Change the greeting")
    p.wait_for("Edited.", after=mark)
    screen = p.screen()[mark:]
    assert "    5 -     print('hi')" in screen and "    5 +     print('hello')" in screen, screen
