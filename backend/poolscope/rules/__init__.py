"""The one rule shape alert rules (alerts/rules/) and recommendation rules (recommend/rules/) share."""
