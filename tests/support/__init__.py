"""Test helpers: the independent reference simulator (naive), adapters to the engine, and
expected figures of the bundled log."""
