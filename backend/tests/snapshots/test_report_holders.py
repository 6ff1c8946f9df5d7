"""The report's holders part from plain data: the timeline's lanes and colours, the incident's top
digests (the statement that held the stalled group first, not the ones that waited), the holders at
the moment with their blockers."""

from __future__ import annotations

from poolscope import __version__
from poolscope.schemas import (
    Blocker,
    FlightEntry,
    FlightGroup,
    FlightHolder,
    FlightQueued,
    GroupHolders,
    Holder,
)
from poolscope.snapshots.document import SnapshotDocument, SnapshotWindow
from poolscope.snapshots.report import render_report
from poolscope.snapshots.report_holders import incident_digests
from tests.alerts.states import group, info, state

HEAVY = "SELECT BENCHMARK(?, MD5(?))"
LIGHT = "SELECT ? + ?"


def _doc() -> SnapshotDocument:
    entries = [FlightEntry(ts=1000.0 + i) for i in range(60)]  # a quiet minute
    for i in range(60, 70):
        stalled = i >= 64
        entries.append(
            FlightEntry(
                ts=1000.0 + i,
                groups=[
                    FlightGroup(
                        group=1,
                        stalled=stalled,
                        queue_length=4,
                        holders=[
                            FlightHolder(connection_id=9, time_s=i - 60.0, digest="heavy", statement=HEAVY),
                            FlightHolder(connection_id=11, time_s=i - 61.0, digest="heavy", statement=HEAVY),
                        ],
                        queued=[
                            FlightQueued(connection_id=c, waited_ms=300.0, digest="light", statement=LIGHT)
                            for c in (13, 15, 17, 19)
                        ],
                    )
                ],
            )
        )
    moment = 1069.0
    return SnapshotDocument(
        poolscope_version=__version__,
        title="t: thread group 1 stalled",
        target="t",
        trigger="alert",
        created_at=moment,
        moment_ts=moment,
        window=SnapshotWindow(from_=moment - 90, to=moment + 1, before_s=90, after_s=1, complete=True),
        target_info=info(moment),
        state=state(moment, [group(0), group(1, stall_reason="no_dequeue", queue_length=4)]),
        holders=[
            GroupHolders(
                group_id=1,
                stalled=True,
                queue_length=4,
                holders=[
                    Holder(
                        connection_id=9,
                        user="sbtest",
                        host="127.0.0.1:5000",
                        command="Query",
                        time_s=9.0,
                        info="SELECT BENCHMARK(?, MD5(?))",
                        digest="heavy",
                        waits_on="row lock",
                        blockers=[
                            Blocker(kind="row_lock", connection_id=3, user="batch", statement="DELETE FROM t")
                        ],
                    )
                ],
            )
        ],
        flight_recorder=entries,
    )


def test_the_top_digest_is_the_statement_that_held_the_stalled_group_not_the_waiters():
    heavy, light = incident_digests(_doc())
    assert (heavy.statement, heavy.stalled_s, heavy.held_s, heavy.connections) == (HEAVY, 12.0, 20.0, {9, 11})
    assert (light.statement, light.stalled_s, light.held_s, light.queued_s) == (LIGHT, 0.0, 0.0, 40.0)
    assert heavy.max_time_s == 9.0 and heavy.groups == {"1"}


def test_the_report_shows_the_timeline_the_top_digests_and_the_holders_with_their_blockers():
    html = render_report(_doc())
    timeline = html.split('data-testid="report-holders-timeline"')[1].split("</svg>")[0]
    assert ">group 1<" in timeline and "var(--bad)" in timeline and 'class="moment"' in timeline
    assert timeline.count('fill="var(--s1)"') == 10  # the ten seconds group 1 was held, by the top digest
    top = html.split('data-testid="report-top-digests"')[1].split("</tbody>")[0]
    rows = top.split("<tr>")[2:]
    assert HEAVY in rows[0] and LIGHT in rows[1]
    holders = html.split('data-testid="report-holders"')[1].split("</table>")[0]
    assert "sbtest@127.0.0.1:5000" in holders and "3 (batch): DELETE FROM t" in holders
    assert "70 seconds recorded" in html


def test_a_snapshot_without_a_recorder_says_so():
    doc = _doc()
    doc.flight_recorder, doc.holders = [], []
    html = render_report(doc)
    assert "No flight recorder" in html and "No group had a queue" in html
