"""A loopback emulator of the Anthropic Messages and OpenAI Chat Completions streaming APIs.

Tests point panto (or any client) at it instead of the real provider. It answers from a
script (a "scenario") or replays a recorded stream byte for byte, and it can misbehave on
purpose: errors, mid-stream errors, odd framings, tiny writes, resets and stalls.
See README.md in this folder for the scenario format.

    from panto.emulator import Emulator
    with Emulator(scenario={"responses": [{"message": {"content": [
            {"type": "text", "text": "Hello there"}]}}]}) as emu:
        ...  # POST {emu.url}/v1/messages

The command line (`python -m panto.emulator`) serves the same code.
Only the standard library is used, and importing this package starts nothing.
"""

from .scenario import Scenario, ScenarioError, load_file, parse
from .server import Emulator

__all__ = ["Emulator", "Scenario", "ScenarioError", "load_file", "parse"]
