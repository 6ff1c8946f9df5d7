"""The recommendation rules: one file each, named after its rule, found here (poolscope/rules/base.py discover)."""

from __future__ import annotations

import sys

from poolscope.recommend.base import RecommendRule
from poolscope.rules.base import discover

ALL_RULES: tuple[RecommendRule, ...] = discover(sys.modules[__name__], RecommendRule)
