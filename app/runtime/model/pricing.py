"""What a model call costs, in US dollars: one price table per model family.

Prices are USD per million tokens, as published on Anthropic's model pages (checked
2026-11-22): https://platform.claude.com/docs/en/about-claude/pricing and the per-model pages
https://platform.claude.com/docs/en/models/{opus-5-5,sonnet-5-5,haiku-5-5,opus-5}/overview.
Cache writes are the 5-minute writes the agent loop asks for (``cache_control: ephemeral``);
cache reads ("cache hits and refreshes") are priced on their own. Sonnet 5.5 cache reads were
cut from $0.20 to $0.10 on 2026-10-07 (as reported against the live pricing page by the
release notes of kurofune/claudit v1.9.2 and TheKrush/PromptFuel v1.0.23). Haiku 5.5 bills a
whole request at 5x when its prompt (input + cache reads + cache writes) is over 100,000 tokens.

The offline model costs nothing: callers pass ``offline=True`` and get $0.
"""

from __future__ import annotations

from dataclasses import dataclass

PRICES_DATE = "2026-11-22"
PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    #: Prompts over this many tokens are billed at ``long_factor`` times every rate.
    long_threshold: int | None = None
    long_factor: float = 1.0


#: Model id prefixes, longest first wins (``claude-opus-5-5`` before ``claude-opus-5``).
PRICES: dict[str, Price] = {
    "claude-fable-5-1": Price(10.0, 50.0, 12.5, 0.25),
    "claude-fable-5": Price(10.0, 50.0, 12.5, 1.0),
    "claude-mythos-5-1": Price(10.0, 50.0, 12.5, 0.25),
    "claude-mythos-5": Price(10.0, 50.0, 12.5, 1.0),
    "claude-opus-5-5": Price(4.0, 20.0, 5.0, 0.20),
    "claude-opus-5": Price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-1": Price(15.0, 75.0, 18.75, 1.50),
    "claude-opus-4-0": Price(15.0, 75.0, 18.75, 1.50),
    "claude-opus-4-2": Price(15.0, 75.0, 18.75, 1.50),  # claude-opus-4-20250514
    "claude-opus-4": Price(5.0, 25.0, 6.25, 0.50),  # 4.5 to 4.8
    "claude-sonnet-5-5": Price(2.0, 10.0, 2.50, 0.10),
    "claude-sonnet-5": Price(2.0, 10.0, 2.50, 0.20),
    "claude-sonnet-4": Price(3.0, 15.0, 3.75, 0.30),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01, long_threshold=100_000, long_factor=5.0),
    "claude-haiku-4": Price(1.0, 5.0, 1.25, 0.10),
}

#: An unknown id of a known family is priced as the family's newest model.
FAMILY_FALLBACK = {
    "fable": "claude-fable-5-1",
    "mythos": "claude-mythos-5-1",
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
}

_BY_LENGTH = sorted(PRICES, key=len, reverse=True)


def price_for(model: str) -> Price | None:
    """The price of ``model`` (a full id, a dated id, or a family name); ``None`` if unknown."""
    name = model.strip().lower()
    for prefix in _BY_LENGTH:
        if name.startswith(prefix):
            return PRICES[prefix]
    for family, fallback in FAMILY_FALLBACK.items():
        if family in name:
            return PRICES[fallback]
    return None


def call_cost(
    model: str,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    *,
    offline: bool = False,
) -> float | None:
    """USD for one model call (``None`` for a model with no known price; 0 offline)."""
    if offline:
        return 0.0
    price = price_for(model)
    if price is None:
        return None
    factor = 1.0
    prompt = input_tokens + cache_read_tokens + cache_write_tokens
    if price.long_threshold is not None and prompt > price.long_threshold:
        factor = price.long_factor
    total = (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_read_tokens * price.cache_read
        + cache_write_tokens * price.cache_write
    )
    return total * factor / 1_000_000


def format_usd(amount: float | None) -> str:
    """``$0.0123`` below a dollar (so small runs are not all "$0.00"), ``$12.34`` above."""
    if amount is None:
        return "$?"
    if amount == 0:
        return "$0"
    if amount < 1:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"


def cost_label(amount: float | None, *, offline: bool) -> str:
    """What the header shows: ``offline · $0`` for the offline model."""
    return "offline · $0" if offline else format_usd(amount)
