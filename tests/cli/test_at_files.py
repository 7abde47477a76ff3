"""`@path` in the interactive prompt (tmux) and in print mode's -p PROMPT (one rule,
at_files.zig): Tab completes the path (a name with spaces quoted, `@"my file.txt"`); on send
a text file is attached fenced under its path, an image as an image part, a missing one is
said."""
from __future__ import annotations

import base64
from pathlib import Path

from conftest import text_reply
from test_interactive import pane, last_user_text  # noqa: F401  (the fixture and a helper)
from test_print import piped_png


def test_tab_completes_the_path_and_the_file_is_attached_fenced(emulator, pane, workdir: Path):
    (workdir / "notes.txt").write_text("milk\neggs\n")
    (workdir / "src").mkdir()
    (workdir / "src" / "main.zig").write_text("pub fn main() void {}\n")
    emu = emulator({"responses": [text_reply("Bread is missing."), text_reply("A main.")]})
    p = pane()
    mark = p.mark()
    p.keys("@no", "Tab")
    p.wait_for("@notes.txt", after=mark)
    p.type("what is missing?")
    p.wait_for("Bread is missing.", after=mark)
    sent = last_user_text(emu.requests()[0])
    assert sent == "@notes.txt what is missing?\n\nnotes.txt:\n```\nmilk\neggs\n```", sent
    # A folder is completed with "/", then the file in it.
    p.keys("look at @s", "Tab")
    p.wait_for("look at @src/", after=mark)
    p.keys("Tab")
    p.wait_for("look at @src/main.zig", after=mark)
    p.keys("Enter")
    p.wait_for("A main.", after=mark)
    assert "src/main.zig:\n```\npub fn main() void {}\n```" in last_user_text(emu.requests()[1])


def test_an_image_is_attached_as_an_image_and_a_missing_file_is_said(emulator, pane, workdir: Path):
    png = piped_png()
    (workdir / "shot.png").write_bytes(png)
    emu = emulator({"responses": [text_reply("A green square.")]})
    p = pane()
    mark = p.mark()
    p.type("what is @shot.png and @gone.txt?")
    screen = p.wait_for("A green square.", after=mark)
    assert "@gone.txt: not attached (no such file)" in screen
    content = emu.requests()[0]["body"]["messages"][-1]["content"]
    images = [b for b in content if b["type"] == "image"]
    assert len(images) == 1 and base64.b64decode(images[0]["source"]["data"]) == png
    texts = [b["text"] for b in content if b["type"] == "text"]
    assert texts == ["what is @shot.png and @gone.txt?"]


def test_a_name_with_spaces_is_completed_quoted_and_attached(emulator, pane, workdir: Path):
    (workdir / "my notes.txt").write_text("buy bread\n")
    (workdir / "old docs").mkdir()
    (workdir / "old docs" / "a b.md").write_text("# A B\n")
    emu = emulator({"responses": [text_reply("Bread."), text_reply("A heading.")]})
    p = pane()
    mark = p.mark()
    # Unquoted as typed: the completion opens the quote, and closes it at the file's end.
    p.keys("@my", "Tab")
    p.wait_for('@"my notes.txt"', after=mark)
    p.type("what to buy?")
    p.wait_for("Bread.", after=mark)
    sent = last_user_text(emu.requests()[0])
    assert sent == '@"my notes.txt" what to buy?\n\nmy notes.txt:\n```\nbuy bread\n```', sent
    # Quoted already: a folder with "/", then the file in it, the quote closed.
    p.keys('see @"old', "Tab")
    p.wait_for('see @"old docs/', after=mark)
    p.keys("a", "Tab")
    p.wait_for('see @"old docs/a b.md"', after=mark)
    p.keys("Enter")
    p.wait_for("A heading.", after=mark)
    assert "old docs/a b.md:\n```\n# A B\n```" in last_user_text(emu.requests()[1])


def test_print_mode_attaches_the_prompts_files_not_the_pipes(emulator, run_panto, workdir: Path):
    (workdir / "src").mkdir()
    (workdir / "src" / "x.zig").write_text("const x = 1;\n")
    (workdir / "my notes.txt").write_text("n\n")
    (workdir / "piped.txt").write_text("never attached\n")
    emu = emulator({"responses": [text_reply("It is x.")]})
    r = run_panto("-p", 'explain @src/x.zig and @"my notes.txt", not @gone.md', input="see @piped.txt\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "It is x.\n"
    assert "panto: @gone.md: not attached (no such file)" in r.stderr
    sent = last_user_text(emu.requests()[0])
    assert sent == ('explain @src/x.zig and @"my notes.txt", not @gone.md\n\nsee @piped.txt\n'
                    "\n\nsrc/x.zig:\n```\nconst x = 1;\n```\n\nmy notes.txt:\n```\nn\n```"), sent


def test_print_mode_attaches_an_image_named_in_the_prompt(emulator, run_panto, workdir: Path):
    png = piped_png()
    (workdir / "shot.png").write_bytes(png)
    emu = emulator({"responses": [text_reply("Green.")]})
    r = run_panto("-p", "what is @shot.png")
    assert r.returncode == 0, r.stderr
    content = emu.requests()[0]["body"]["messages"][-1]["content"]
    images = [b for b in content if b["type"] == "image"]
    assert len(images) == 1 and base64.b64decode(images[0]["source"]["data"]) == png
