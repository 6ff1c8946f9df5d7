"""Who each session is: learnt one by one, or from a listing of every session (the SHOW form)."""

from __future__ import annotations

from poolscope.analysis.session_identity import SessionIdentities, SessionIdentity

APP = SessionIdentity("app", "10.0.0.5:4007", "shop")
ETL = SessionIdentity("etl", "10.0.0.6:5001", None)


def test_learnt_one_by_one_and_bounded() -> None:
    identities = SessionIdentities(max_entries=2)
    identities.learn({1: APP, 2: ETL})
    identities.learn({3: APP})
    assert identities.get(1) is None, "the oldest goes first"
    assert (identities.get(2), identities.get(3)) == (ETL, APP)
    assert identities.unknown([1, 2, 3, None]) == {1}


def test_a_complete_listing_replaces_what_was_learnt_before() -> None:
    identities = SessionIdentities()
    identities.learn({1: APP, 2: ETL})
    # Every session the server has: 1 is listed again with its newer db, 2 has disconnected.
    identities.learn({1: APP._replace(db="other"), 5: ETL}, complete=True)
    assert identities.get(1) == APP._replace(db="other")
    assert identities.get(5) == ETL
    assert identities.get(2) is None
    assert identities.unknown([1, 2, 5]) == {2}
    # Learnt after the listing (a lookup by id, an active session): newer than the listing.
    identities.learn({5: APP, 6: APP})
    assert (identities.get(5), identities.get(6)) == (APP, APP)
    assert identities.unknown([1, 5, 6, 7]) == {7}
    identities.forget()
    assert identities.unknown([1, 5, 6]) == {1, 5, 6}
