"""Tuning recommendations from live evidence: pure rules over state + a window of history."""
