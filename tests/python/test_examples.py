"""The examples run as `make demo` runs them, against the emulator, and each prints the
streamed text of its turn."""
import json
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_demo_streams_text_in_every_language():
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PANTO_BASE_URL")}
    result = subprocess.run(
        [str(ROOT / "scripts" / "demo.sh")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    scenario = json.loads((ROOT / "examples" / "demo-scenario.json").read_text())
    text = scenario["responses"][0]["message"]["content"][0]["text"].strip()
    for lang in ("c", "python", "go", "lua"):
        assert f"[{lang}] {text}" in result.stdout, result.stdout
    assert result.stdout.count("(end_turn, 17 tokens out)") == 4, result.stdout
    # The tool round trip: each language ran get_weather with the model's input and the model's
    # answer after the result streamed in.
    tool = json.loads((ROOT / "examples" / "tool_use-scenario.json").read_text())
    call = tool["responses"][0]["message"]["content"][1]
    answer = tool["responses"][1]["message"]["content"][0]["text"].strip()
    assert result.stdout.count(f'  -> {call["name"]}({json.dumps(call["input"], separators=(",", ":"))})') == 4, result.stdout
    assert result.stdout.count(f'  <- Sunny, 21 degrees in {call["input"]["city"]}\n{answer}') == 4, result.stdout
