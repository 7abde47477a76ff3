"""What panto knows of a model (panto_model_info): its limits, list prices and abilities, from
the model catalog (litellm's model table, pinned) and the config's `model_info`.

    info = panto.model_info("anthropic", "claude-sonnet-4-5-20250929")
    info.max_output_tokens, info.price.input, info.abilities.images

`None` where a limit or price is unknown: never a guess, never zero. The field names are the
config's `model_info` keys, so `info.to_config()` is what `Agent(model_info=...)` takes."""

from __future__ import annotations

import ctypes
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from . import _native

__all__ = ["ModelInfo", "ModelPrice", "LongContextPrice", "ModelAbilities", "ModelEntry", "model_info"]


@dataclass(frozen=True)
class ModelPrice:
    """List prices in USD per million tokens; None: unknown."""

    input: Optional[float] = None
    output: Optional[float] = None
    cache_read: Optional[float] = None
    #: Anthropic's cache writes, by the cache's lifetime (5 minutes, the default, or 1 hour).
    cache_write_5m: Optional[float] = None
    cache_write_1h: Optional[float] = None
    #: Only where reasoning tokens are billed apart from output tokens.
    reasoning: Optional[float] = None


@dataclass(frozen=True)
class LongContextPrice:
    """The prices of a whole request once its prompt (cached tokens included) passes `above`."""

    above: int
    input: Optional[float] = None
    output: Optional[float] = None
    cache_read: Optional[float] = None
    cache_write_5m: Optional[float] = None
    cache_write_1h: Optional[float] = None


@dataclass(frozen=True)
class ModelAbilities:
    tools: bool = False
    images: bool = False
    pdfs: bool = False
    thinking: bool = False
    structured_output: bool = False
    caching: bool = False


@dataclass(frozen=True)
class ModelInfo:
    #: The catalog's name (the undated alias a dated name was found by), or the name asked.
    name: str
    #: The most prompt tokens a request may carry (not the context window).
    max_input_tokens: Optional[int] = None
    max_output_tokens: Optional[int] = None
    price: ModelPrice = field(default_factory=ModelPrice)
    long_context: Optional[LongContextPrice] = None
    abilities: ModelAbilities = field(default_factory=ModelAbilities)
    #: The catalog's source ("litellm 1.110.2"); None when only the config's model_info knows it.
    catalog: Optional[str] = None

    def to_config(self) -> Dict[str, Any]:
        """The config's `model_info` value saying all of this (unknowns left out)."""
        out: Dict[str, Any] = {}
        for key in ("max_input_tokens", "max_output_tokens"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["price"] = {k: v for k, v in asdict(self.price).items() if v is not None}
        if self.long_context is not None:
            out["long_context"] = {k: v for k, v in asdict(self.long_context).items() if v is not None}
        out["abilities"] = asdict(self.abilities)
        return out


@dataclass(frozen=True)
class ModelEntry:
    """A model the provider lists for the account (`Agent.list_models`)."""

    #: The provider's id for it, as the config's `model` takes it.
    id: str
    #: The provider's name for people, when it gives one.
    display_name: Optional[str] = None
    #: When the provider released it, RFC 3339 ("2025-09-29T00:00:00Z"), when it says.
    created: Optional[str] = None
    #: What the model catalog says of it; None when the catalog does not list it.
    info: Optional[ModelInfo] = None


def entries_from_json(text: str) -> List[ModelEntry]:
    """The library's model list (panto_agent_list_models)."""
    return [
        ModelEntry(id=e["id"], display_name=e.get("display_name"), created=e.get("created"), info=_from_value(e["model_info"]))
        for e in json.loads(text)
    ]


def from_json(text: str) -> Optional[ModelInfo]:
    """The library's JSON (an object, or null for a model panto knows nothing of)."""
    return _from_value(json.loads(text))


def _from_value(raw: Any) -> Optional[ModelInfo]:
    if raw is None:
        return None
    long: Optional[Mapping[str, Any]] = raw.get("long_context")
    return ModelInfo(
        name=raw["name"],
        max_input_tokens=raw.get("max_input_tokens"),
        max_output_tokens=raw.get("max_output_tokens"),
        price=ModelPrice(**{k: float(v) for k, v in raw["price"].items()}),
        long_context=None if long is None else LongContextPrice(int(long["above"]), **{k: float(v) for k, v in long.items() if k != "above"}),
        abilities=ModelAbilities(**raw["abilities"]),
        catalog=raw["catalog"],
    )


def model_info(provider: str, model: str) -> Optional[ModelInfo]:
    """What the model catalog says of `provider`'s `model` (a dated name finds its alias), or
    None when it does not list it. `Agent.model_info` is the agent's model with its config's
    `model_info` over the catalog's."""
    lib = _native.LIB
    if lib is None:
        from .errors import LibraryNotFound

        raise LibraryNotFound(_native.LOOKED_IN)
    p = provider.encode("utf-8")
    m = model.encode("utf-8")
    size = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(2048)
    while True:
        rc = lib.model_info(_native.string(p), _native.string(m), buf, len(buf), ctypes.byref(size))
        if rc < 0:  # only a NULL argument, which this call never passes
            raise RuntimeError(f"panto_model_info returned {rc}")
        if size.value <= len(buf):
            return from_json(buf.raw[: size.value].decode("utf-8"))
        buf = ctypes.create_string_buffer(size.value)
