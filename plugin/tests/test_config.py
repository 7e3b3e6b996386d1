"""config.py: settings from HERMES_SIDECAR_* variables, each malformed one its default (logged),
the token from its variable or file, and the disable switch."""

import logging
import os
import tempfile
import unittest

from plugin.tests import support


class ConfigTest(unittest.TestCase):
    def test_defaults(self):
        config = support.config_module.config_from_env({})
        self.assertEqual(config.url, "http://127.0.0.1:9479/v1/events")
        self.assertIsNone(config.token)
        self.assertEqual((config.queue_size, config.buffer_size, config.batch_size),
                         (10000, 10000, 2000))
        self.assertEqual((config.flush_interval, config.timeout, config.heartbeat_interval),
                         (0.2, 2.0, 5.0))
        self.assertEqual((config.shutdown_timeout, config.flush_timeout), (1.0, 1.0))

    def test_values_from_the_environment(self):
        config = support.config_module.config_from_env({
            "HERMES_SIDECAR_URL": "http://127.0.0.1:1234/v1/events",
            "HERMES_SIDECAR_TOKEN": " tok ",
            "HERMES_SIDECAR_QUEUE_SIZE": "50",
            "HERMES_SIDECAR_BUFFER_SIZE": "60",
            "HERMES_SIDECAR_BATCH_SIZE": "7",
            "HERMES_SIDECAR_FLUSH_INTERVAL": "0.5",
            "HERMES_SIDECAR_TIMEOUT": "3",
            "HERMES_SIDECAR_HEARTBEAT_INTERVAL": "10",
        })
        self.assertEqual(config.url, "http://127.0.0.1:1234/v1/events")
        self.assertEqual(config.token, "tok")
        self.assertEqual((config.queue_size, config.buffer_size, config.batch_size),
                         (50, 60, 7))
        self.assertEqual((config.flush_interval, config.timeout, config.heartbeat_interval),
                         (0.5, 3.0, 10.0))

    def test_malformed_values_fall_back_to_defaults_with_a_warning(self):
        with self.assertLogs("hermes_prometheus_bridge", level=logging.WARNING) as logs:
            config = support.config_module.config_from_env({
                "HERMES_SIDECAR_QUEUE_SIZE": "lots", "HERMES_SIDECAR_BATCH_SIZE": "0",
                "HERMES_SIDECAR_FLUSH_INTERVAL": "nan", "HERMES_SIDECAR_TIMEOUT": "-1",
            })
        self.assertEqual((config.queue_size, config.batch_size), (10000, 2000))
        self.assertEqual((config.flush_interval, config.timeout), (0.2, 2.0))
        self.assertEqual(len(logs.output), 4)

    def test_token_variable_wins_over_token_file_and_a_missing_file_means_no_token(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as handle:
            handle.write("from-file\n")
        self.addCleanup(os.unlink, handle.name)
        from_env = support.config_module.config_from_env
        self.assertEqual(from_env({"HERMES_SIDECAR_TOKEN_FILE": handle.name}).token, "from-file")
        self.assertEqual(from_env({"HERMES_SIDECAR_TOKEN": "env",
                                   "HERMES_SIDECAR_TOKEN_FILE": handle.name}).token, "env")
        with self.assertLogs("hermes_prometheus_bridge", level=logging.WARNING):
            self.assertIsNone(from_env({"HERMES_SIDECAR_TOKEN_FILE": handle.name + ".x"}).token)

    def test_the_disable_switch(self):
        is_disabled = support.config_module.is_disabled
        for value in ("1", "true", " YES ", "on"):
            with self.subTest(value=value):
                self.assertTrue(is_disabled({"HERMES_SIDECAR_DISABLED": value}))
        for value in ("", "0", "false", "no", "off", "disabled"):
            with self.subTest(value=value):
                self.assertFalse(is_disabled({"HERMES_SIDECAR_DISABLED": value}))
        self.assertFalse(is_disabled({}))


if __name__ == "__main__":
    unittest.main()
