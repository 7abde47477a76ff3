"""An agent with typed tools: Pydantic models as parameters and results, a Literal, a
`panto.ToolClass` holding state, and what happens when the model sends bad input.

    python examples/python/typed_tools.py

panto makes each tool's JSON Schema from the annotations and docstring, checks the model's
input against it before the handler runs (a missing field never reaches your code: the model
gets the error with the field's full path and can try again), and hands the handler validated
model instances. See examples/README.md for the environment variables it reads."""
import json
import os
import sys
from typing import List, Literal

from pydantic import BaseModel, Field

import panto


class Passenger(BaseModel):
    name: str
    age: int = Field(ge=0, le=130)


class FlightRequest(BaseModel):
    origin: str = Field(description="IATA code of the departure airport, e.g. CDG")
    destination: str = Field(description="IATA code of the arrival airport")
    passengers: List[Passenger]
    cabin: Literal["economy", "business"] = "economy"


class Booking(BaseModel):
    reference: str
    seats: int
    price_eur: float


@panto.tool
def book_flight(request: FlightRequest) -> Booking:
    """Books a flight for every passenger of the request.

    Args:
        request: Where from, where to, who flies and in which cabin.
    """
    per_seat = 180.0 if request.cabin == "economy" else 640.0
    return Booking(reference=f"{request.origin}{request.destination}42", seats=len(request.passengers),
                   price_eur=per_seat * len(request.passengers))


class Ledger(panto.ToolClass):
    """Records an expense in the trip's ledger and returns the running total."""

    amount_eur: float = panto.Param("The amount, in euros")
    note: str = panto.Param("What it was for", default="")

    total = 0.0  # class state shared by the calls of this program

    def run(self) -> str:
        Ledger.total += self.amount_eur
        return f"recorded {self.amount_eur:.2f} EUR ({self.note}); total {Ledger.total:.2f} EUR"


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=1024,
                     tools=[book_flight, Ledger]) as agent:
        mid_line = False  # text was printed without its newline yet
        try:
            for event in agent.run("Book Paris to Lisbon for Ada (36) and Alan (41), economy, "
                                   "and record the cost in the ledger."):
                if isinstance(event, (panto.ToolCallStart, panto.ToolResult)) and mid_line:
                    print()
                    mid_line = False
                if isinstance(event, panto.ToolCallStart):
                    print(f"[python] -> {event.name}({json.dumps(event.input, separators=(',', ':'))})")
                elif isinstance(event, panto.ToolResult):
                    print(f"[python] <- {'error: ' if event.is_error else ''}{event.content}")
                elif isinstance(event, panto.ContentDelta) and event.block_kind == "text":
                    print(event.text, end="", flush=True)
                    mid_line = True
            print()
        except panto.Error as err:
            print(f"\n[python] error: {err.code}: {err.message}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
