"""Cost in USD of a finished API call, priced with Hermes' own ``agent.usage_pricing``.

Runs on the sender thread only, never on the agent thread. The module is looked up in
``sys.modules`` (Hermes has imported it by the time a call finishes), never imported here: the
plugin does nothing outside Hermes. ``estimate_usage_cost(model, CanonicalUsage(...),
provider=, base_url=)`` is called without an API key, so an unknown route is never looked up
with credentials. A route Hermes cannot price is remembered per provider/model/base_url for
``UNKNOWN_TTL`` seconds, so it is not asked again for every call. A missing or changed module
costs a counter (``cost_unavailable`` once, ``cost_error`` per failed route) and no cost field.
"""

import logging
import math
import sys
import time

from .contract import PATTERNS

logger = logging.getLogger("hermes_prometheus_bridge")

PRICING_MODULE = "agent.usage_pricing"
UNKNOWN_TTL = 300.0
# A lookup slower than this (Hermes fetched a price list over the network) is logged once.
SLOW_SECONDS = 0.5
_TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
               "reasoning_tokens", "request_count")


class Pricer(object):
    def __init__(self, counters, modules=sys.modules, clock=time.monotonic):
        self._counters = counters
        self._modules = modules
        self._clock = clock
        self._api = None          # (estimate_usage_cost, CanonicalUsage) once found
        self._unavailable = False
        self._unknown_until = {}  # (provider, model, base_url) -> monotonic deadline
        self._slow_reported = False

    def price(self, model, provider, base_url, usage):
        """``(cost_usd, cost_status)``, or ``None`` when no cost can be stated."""
        if type(usage) is not dict or type(model) is not str or not model:
            return None
        api = self._resolve()
        if api is None:
            return None
        provider = provider if type(provider) is str else None
        base_url = base_url if type(base_url) is str else None
        key = (provider, model, base_url)
        until = self._unknown_until.get(key)
        if until is not None:
            if self._clock() < until:
                return None, "unknown"
            del self._unknown_until[key]
        estimate, canonical_usage = api
        started = self._clock()
        try:
            result = estimate(model, canonical_usage(**_token_counts(usage)),
                              provider=provider, base_url=base_url)
            amount, status = result.amount_usd, result.status
        except Exception as exc:
            self._counters.error("cost_error")
            self._unknown_until[key] = self._clock() + UNKNOWN_TTL
            logger.debug("hermes_prometheus_bridge: pricing failed (%s)", type(exc).__name__)
            return None
        self._report_if_slow(started)
        status = status if type(status) is str and PATTERNS["cost_status"].match(status) \
            else "unknown"
        cost = _finite_usd(amount)
        if cost is None:
            self._unknown_until[key] = self._clock() + UNKNOWN_TTL
            return None, "unknown"
        return cost, status

    @property
    def unavailable(self):
        """``True`` once Hermes' pricing module was found missing: nothing will be priced, so
        the sender need not ask per call."""
        return self._unavailable

    def _resolve(self):
        if self._api is not None or self._unavailable:
            return self._api
        module = self._modules.get(PRICING_MODULE)
        estimate = getattr(module, "estimate_usage_cost", None)
        canonical_usage = getattr(module, "CanonicalUsage", None)
        if not callable(estimate) or not callable(canonical_usage):
            self._unavailable = True
            self._counters.error("cost_unavailable")
            return None
        self._api = (estimate, canonical_usage)
        return self._api

    def _report_if_slow(self, started):
        if not self._slow_reported and self._clock() - started > SLOW_SECONDS:
            self._slow_reported = True
            logger.warning("hermes_prometheus_bridge: Hermes' pricing lookup took over %.1f s "
                           "(a price list fetch); later calls use its cache", SLOW_SECONDS)


def _token_counts(usage):
    counts = {}
    for key in _TOKEN_KEYS:
        value = usage.get(key)
        if type(value) is int and value >= 0:
            counts[key] = value
    return counts


def _finite_usd(amount):
    if amount is None:
        return None
    try:
        value = float(amount)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None
