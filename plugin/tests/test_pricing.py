"""pricing.py: cost in USD from Hermes' own agent.usage_pricing, on the sender thread only."""

import threading
import types
import unittest
from decimal import Decimal

from plugin.tests import support
from plugin.tests.support import RecordingSidecar

pricing_module = __import__("hermes_prometheus_bridge.pricing", fromlist=["Pricer"])


class FakePricing(object):
    """Stands in for ``agent.usage_pricing`` with known prices (per million tokens)."""

    def __init__(self, prices, fail=False):
        self.prices = prices
        self.fail = fail
        self.calls = []
        self.threads = set()
        pricing = self

        class CanonicalUsage(object):
            def __init__(self, input_tokens=0, output_tokens=0, cache_read_tokens=0,
                         cache_write_tokens=0, reasoning_tokens=0, request_count=1):
                self.input_tokens, self.output_tokens = input_tokens, output_tokens
                self.cache_read_tokens, self.cache_write_tokens = cache_read_tokens, \
                    cache_write_tokens

        def estimate_usage_cost(model, usage, *, provider=None, base_url=None, api_key=None):
            pricing.calls.append((model, provider, base_url, api_key))
            pricing.threads.add(threading.current_thread().name)
            if pricing.fail:
                raise AttributeError("changed module")
            if provider == "openai-codex":
                return types.SimpleNamespace(amount_usd=Decimal("0"), status="included")
            rates = pricing.prices.get((provider, model))
            if rates is None:
                return types.SimpleNamespace(amount_usd=None, status="unknown")
            amount = sum(Decimal(tokens) * Decimal(rate) / Decimal(1000000) for tokens, rate in (
                (usage.input_tokens, rates[0]), (usage.output_tokens, rates[1]),
                (usage.cache_read_tokens, rates[2]), (usage.cache_write_tokens, rates[3])))
            return types.SimpleNamespace(amount_usd=amount, status="estimated")

        self.module = types.ModuleType("agent.usage_pricing")
        self.module.CanonicalUsage = CanonicalUsage
        self.module.estimate_usage_cost = estimate_usage_cost


class CostTest(unittest.TestCase):
    USAGE = {"input_tokens": 1000000, "output_tokens": 200000, "cache_read_tokens": 500000,
             "cache_write_tokens": 0, "reasoning_tokens": 0, "request_count": 1,
             "prompt_tokens": 1500000, "total_tokens": 1700000}

    def send(self, modules, *calls):
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(sidecar.url), pricing_modules=modules)
            callback = bridge.hook_callback("post_api_request")
            for kwargs in calls:
                callback(**kwargs)
            bridge.start()
            self.assertTrue(bridge.flush(2.0))
            bridge.shutdown(0.5)
            return [e["data"] for e in sidecar.events()], bridge.stats()["errors"]

    def call(self, provider, model, usage=None):
        return {"provider": provider, "model": model, "base_url": "https://example.invalid/v1",
                "api_key": "sk-never-read", "usage": dict(usage or self.USAGE)}

    def test_known_prices_give_exact_cost_on_the_sender_thread(self):
        pricing = FakePricing({("anthropic", "claude-x"): ("3", "15", "0.3", "3.75")})
        data, errors = self.send(
            {"agent.usage_pricing": pricing.module},
            self.call("anthropic", "claude-x"), self.call("openai-codex", "gpt-5.6-sol"),
            self.call("custom", "local-model"), self.call("custom", "local-model"),
            {"provider": "anthropic", "model": "claude-x"})  # no usage: not priced
        self.assertEqual([(d.get("cost_usd"), d.get("cost_status")) for d in data], [
            (3.0 + 3.0 + 0.15, "estimated"), (0.0, "included"), (None, "unknown"),
            (None, "unknown"), (None, None)])
        # The unknown route was asked once (cached), never with an API key.
        self.assertEqual(pricing.calls, [
            ("claude-x", "anthropic", "https://example.invalid/v1", None),
            ("gpt-5.6-sol", "openai-codex", "https://example.invalid/v1", None),
            ("local-model", "custom", "https://example.invalid/v1", None)])
        self.assertEqual(errors, {})
        self.assertNotIn("base_url", data[0])
        self.assertEqual(pricing.threads, {"hermes-prometheus-bridge"})  # never the agent's

    def test_without_hermes_pricing_there_is_no_cost_field_and_one_counter(self):
        data, errors = self.send({}, self.call("anthropic", "claude-x"),
                                 self.call("anthropic", "claude-x"))
        self.assertEqual([sorted(d) for d in data], [sorted(data[0])] * 2)
        self.assertNotIn("cost_usd", data[0])
        self.assertNotIn("cost_status", data[0])
        self.assertEqual(errors, {"cost_unavailable": 1})

    def test_a_changed_pricing_module_costs_a_counter_not_the_event(self):
        pricing = FakePricing({}, fail=True)
        data, errors = self.send({"agent.usage_pricing": pricing.module},
                                 self.call("anthropic", "claude-x"),
                                 self.call("anthropic", "claude-x"))
        self.assertEqual(len(data), 2)
        self.assertNotIn("cost_usd", data[0])
        self.assertEqual(errors, {"cost_error": 1})  # the route is not asked again



class Errors(object):
    def __init__(self):
        self.counted = []

    def error(self, name):
        self.counted.append(name)


class PricerTest(unittest.TestCase):
    USAGE = {"input_tokens": 1000000, "output_tokens": 0, "cache_read_tokens": 0,
             "cache_write_tokens": 0, "reasoning_tokens": 0, "request_count": 1}

    def pricer(self, pricing):
        now = [1000.0]
        errors = Errors()
        pricer = pricing_module.Pricer(errors, modules={"agent.usage_pricing": pricing.module},
                                       clock=lambda: now[0])
        return pricer, errors, now

    def test_asks_again_for_an_unknown_route_once_its_ttl_has_passed(self):
        pricing = FakePricing({})
        pricer, errors, now = self.pricer(pricing)
        self.assertEqual(pricer.price("m", "p", None, dict(self.USAGE)), (None, "unknown"))
        now[0] += pricing_module.UNKNOWN_TTL - 1
        self.assertEqual(pricer.price("m", "p", None, dict(self.USAGE)), (None, "unknown"))
        self.assertEqual(len(pricing.calls), 1)
        pricing.prices[("p", "m")] = ("2", "0", "0", "0")
        now[0] += 1
        self.assertEqual(pricer.price("m", "p", None, dict(self.USAGE)), (2.0, "estimated"))
        self.assertEqual((len(pricing.calls), errors.counted), (2, []))

    def test_states_no_cost_without_a_usage_dict_or_a_model(self):
        pricing = FakePricing({("p", "m"): ("1", "1", "1", "1")})
        pricer, _errors, _now = self.pricer(pricing)
        self.assertIsNone(pricer.price("m", "p", None, None))
        self.assertIsNone(pricer.price("", "p", None, dict(self.USAGE)))
        self.assertIsNone(pricer.price(7, "p", None, dict(self.USAGE)))
        self.assertEqual(pricing.calls, [])


if __name__ == "__main__":
    unittest.main()
