"""Structured output into a Pydantic model: `agent.parse(question, Model)` sends the model's
schema as the turn's response format and returns a validated instance (nested models, enums
and Literals included). An answer that does not fit raises `panto.OutputError`, with the
model's text; the turn itself is kept in the conversation.

    python examples/python/structured_output.py

See examples/README.md for the environment variables it reads."""
import os
import sys
from enum import Enum
from typing import List, Optional

from pydantic import BaseModel, Field

import panto


class Kind(str, Enum):
    museum = "museum"
    monument = "monument"
    park = "park"


class Landmark(BaseModel):
    name: str
    kind: Kind
    built: Optional[int] = Field(default=None, description="Year of completion, if known")


class City(BaseModel):
    name: str
    country: str
    population: int = Field(gt=0)
    landmarks: List[Landmark]


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=1024) as agent:
        try:
            city = agent.parse("The capital of Portugal, with two landmarks.", City)
            print(f"[python] {city.name}, {city.country}: {city.population:,} people")
            for landmark in city.landmarks:
                print(f"[python]   {landmark.name} ({landmark.kind.value}, {landmark.built or 'year unknown'})")
            # A second question whose answer does not fit the model.
            agent.parse("And the capital of Atlantis?", City)
        except panto.OutputError as err:
            print(f"[python] not a City: {err.output!r}")
        except panto.Error as err:
            print(f"[python] error: {err.code}: {err.message}", file=sys.stderr)
            return 1
        print(f"[python] conversation: {agent.message_count} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
