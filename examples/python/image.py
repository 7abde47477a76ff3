"""Images from Python: a user turn with a picture, and a tool that hands the model another one.

    python examples/python/image.py [FILE]

FILE is an image (PNG, JPEG, GIF, WEBP, BMP) or a PDF; without one the example draws a small
BMP itself. panto finds the format by the bytes and fits the image to the provider's rules (a
BMP is sent as PNG); the ToolResult event lists each part as it was sent. See
examples/README.md."""
import json
import os
import struct
import sys
from typing import List, Union

import panto


def draw_bmp(width: int, height: int) -> bytes:
    """A width x height 24-bit BMP: a diagonal gradient, the simplest image to write by hand."""
    row = (width * 3 + 3) // 4 * 4
    pixels = bytearray(row * height)
    for y in range(height):
        for x in range(width):
            pixels[y * row + x * 3: y * row + x * 3 + 3] = bytes((x * 4 % 256, y * 5 % 256, 200))  # B, G, R
    header = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(pixels), 0, 0, 0, 0)
    return header + info + bytes(pixels)


@panto.tool
def screenshot() -> List[Union[str, panto.Image]]:
    """Takes a screenshot of the screen."""
    # A tool returns raw bytes (here with a line of text): panto does the rest.
    return ["The screen right now:", panto.Image(draw_bmp(32, 32), name="screen.bmp")]


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    picture = panto.Image(sys.argv[1]) if len(sys.argv) > 1 else panto.Image(draw_bmp(64, 48), name="gradient.bmp")
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=300, tools=[screenshot]) as agent:
        print("[python] ", end="", flush=True)
        try:
            for event in agent.run(["What is in this picture? Then take a screenshot and compare.", picture]):
                if isinstance(event, panto.ToolCallStart):
                    print(f"\n  -> {event.name}({json.dumps(event.input, separators=(',', ':'))})", flush=True)
                elif isinstance(event, panto.ToolResult):
                    for part in event.parts or [event.content]:
                        if isinstance(part, str) or part.kind == "text":
                            print(f"  <- {part if isinstance(part, str) else part.text}")
                        else:
                            print(f"  <- {part.kind} {part.media_type}, {part.width}x{part.height}, {part.byte_size} bytes")
                elif isinstance(event, panto.ContentDelta) and event.block_kind == "text":
                    print(event.text, end="", flush=True)
        except panto.Error as err:
            print(f"\nturn failed ({err.code}): {err.message}", file=sys.stderr)
            return 1
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
