"""A tool round trip from Python: the model asks for the weather, panto runs the tool while
we iterate, and the model answers with the result. See examples/README.md."""
import json
import os
import sys

import panto


@panto.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Paris".
    """
    return f"Sunny, 21 degrees in {city}"


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=300, tools=[get_weather]) as agent:
        print("[python] ", end="", flush=True)
        try:
            for event in agent.run("What is the weather in Paris?"):
                if isinstance(event, panto.ToolCallStart):
                    print(f"\n  -> {event.name}({json.dumps(event.input, separators=(',', ':'))})", flush=True)
                elif isinstance(event, panto.ToolResult):
                    print(f"  <- {event.content}", flush=True)
                elif isinstance(event, panto.ContentDelta) and event.block_kind == "text":
                    print(event.text, end="", flush=True)
        except panto.Error as err:
            print(f"\nturn failed ({err.code}): {err.message}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
