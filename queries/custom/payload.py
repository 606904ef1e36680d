"""What a custom event may hold, checked where it comes in (the ``/hit`` beacon): a
name, up to ``MAX_PROPS`` string properties and an optional revenue, all bounded, all
valid Unicode without control characters. An amount is kept as the exact decimal text
it was sent as (``"49.00"``); sums are ``Decimal`` and never mix currencies."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from .. import validation
from ..errors import HitboardError
from ..stats.goals import MAX_NAME

MAX_PROPS = 30
MAX_KEY = 64
MAX_PROP_VALUE = 200
MAX_AMOUNT = Decimal("1e12")
MAX_ENGAGEMENT_MS = 24 * 3_600_000
CURRENCY = re.compile(r"[A-Z]{3}")
# ASCII digits only (``\d`` would take ``١٢``, Arabic-Indic 12), and never negative:
# a refund sent as revenue would lower a site's takings.
_AMOUNT = re.compile(r"[0-9]{1,13}(\.[0-9]{1,6})?")


class CustomEventError(HitboardError):
    """A custom event the sender must correct (a 400)."""


class Revenue(NamedTuple):
    currency: str       # ISO 4217, e.g. "EUR"
    amount: str         # the decimal text as sent, e.g. "49.00"


class CustomEvent(NamedTuple):
    name: str
    props: tuple[tuple[str, str], ...]     # sorted by key
    revenue: Revenue | None


def custom_event(name, props=None, revenue=None) -> CustomEvent:
    """The checked event, or :class:`CustomEventError` saying what is wrong."""
    if not isinstance(name, str) or not name.strip():
        raise CustomEventError("event must be a non-empty string, e.g. \"Signup\"")
    _text(name, "event", MAX_NAME)
    return CustomEvent(name, _props(props), _revenue(revenue))


def _text(value, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise CustomEventError(f"{what} must be a string")
    try:
        return validation.text(value, what, limit)
    except HitboardError as exc:
        raise CustomEventError(str(exc)) from None


def _props(props) -> tuple[tuple[str, str], ...]:
    if props is None:
        return ()
    if not isinstance(props, dict):
        raise CustomEventError('props must be an object of strings: {"plan": "pro"}')
    if len(props) > MAX_PROPS:
        raise CustomEventError(f"{len(props)} props, at most {MAX_PROPS}")
    pairs = []
    for key, value in props.items():
        _text(key, "a prop's name", MAX_KEY)
        if not key:
            raise CustomEventError("a prop's name must not be empty")
        if isinstance(value, bool | int | float):
            value = str(value).lower() if isinstance(value, bool) else str(value)
        pairs.append((key, _text(value, f"prop {key[:40]!r}", MAX_PROP_VALUE)))
    return tuple(sorted(pairs))


def _revenue(revenue) -> Revenue | None:
    if revenue is None:
        return None
    if not isinstance(revenue, dict) or set(revenue) != {"currency", "amount"}:
        raise CustomEventError('revenue must be {"currency": "EUR", "amount": "49.00"}')
    currency, amount = revenue["currency"], revenue["amount"]
    if not isinstance(currency, str) or not CURRENCY.fullmatch(currency):
        raise CustomEventError("revenue's currency must be an ISO 4217 code, e.g. EUR")
    if isinstance(amount, int | float) and not isinstance(amount, bool):
        amount = repr(amount) if isinstance(amount, float) else str(amount)
    if not isinstance(amount, str) or not _AMOUNT.fullmatch(amount):
        raise CustomEventError("revenue's amount must be a decimal number of ASCII digits, "
                               "not negative, e.g. \"49.00\" (at most 13 digits before "
                               "the point, 6 after)")
    if decimal(amount) >= MAX_AMOUNT:
        raise CustomEventError("revenue's amount is too large")
    return Revenue(currency, amount)


def engagement(value) -> int:
    """Milliseconds a page was visible, as the script sends them when it is left."""
    if type(value) is not int or not 0 <= value <= MAX_ENGAGEMENT_MS:
        raise CustomEventError(f"engagement is whole milliseconds, 0 to {MAX_ENGAGEMENT_MS:,}")
    return value


def decimal(amount: str) -> Decimal:
    try:
        return Decimal(amount)
    except InvalidOperation:
        raise CustomEventError(f"not a decimal amount: {amount[:40]!r}") from None
