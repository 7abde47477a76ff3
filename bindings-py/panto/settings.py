"""The agent's settings as `Agent.settings` gives them (panto_agent_settings): what it talks to
and how, in the keys and values the constructor takes. Imported on first use (`import panto`
does not import typing)."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, TypedDict, Union

__all__ = ["SettingsDict", "ThinkingLevel"]

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high"]


class SettingsDict(TypedDict):
    provider: str
    model: str
    #: Where requests go: given, or derived from the provider's environment variable or default.
    base_url: str
    system: Optional[str]
    max_tokens: int
    thinking: ThinkingLevel
    max_tool_iterations: int
    capabilities: List[str]
    #: The turn's budgets ("output_tokens", "tool_rounds", "wall_ms", "cost_usd"), each None
    #: when unset.
    budget: Dict[str, Optional[Union[int, float]]]
