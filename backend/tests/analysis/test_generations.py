"""The two-generation store of values made from their keys (analysis/last_made.py Generations)."""

from poolscope.analysis.last_made import Generations


def test_a_full_generation_becomes_the_older_and_what_is_recalled_moves_back() -> None:
    made: Generations[str, object] = Generations(3)
    steady = made.keep("steady", object())
    made.keep("a", object())
    assert made.newer.get("steady") is steady and not made.older
    made.keep("b", object())  # full: the newer becomes the older
    assert made.newer == {} and set(made.older) == {"steady", "a", "b"}
    assert made.newer.get("steady") is None and made.recall("steady") is steady
    assert made.newer == {"steady": steady}, "recalled: kept into the next generation"
    for key in "cde":  # the newer fills again: "a" and "b", not recalled, are dropped
        made.keep(key, object())
    assert made.recall("a") is None and made.recall("steady") is steady
    made.clear()
    assert made.recall("steady") is None and made.newer == {}
