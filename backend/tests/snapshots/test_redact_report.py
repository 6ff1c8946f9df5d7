"""SQL literal redaction, secret variables, and the offline report's charts (pure functions)."""

from __future__ import annotations

from poolscope.schemas import SeriesOut
from poolscope.snapshots.redact import REDACTED, redact_sql, redact_variables
from poolscope.snapshots.report import WIDTH, ReportView, nice_ticks, svg_chart, thin, time_ticks


def test_sql_literals_are_replaced_and_names_kept():
    sql = "SELECT * FROM t1 WHERE id = 42 AND name = 'O''Brien' AND x IN (1.5, -3) AND h = 0xFF /* c2 */"
    assert redact_sql(sql) == "SELECT * FROM t1 WHERE id = ? AND name = ? AND x IN (?, ?) AND h = ? /* c2 */"
    assert redact_sql("UPDATE t SET v = \"secret\" WHERE k = 'a\\'b'") == "UPDATE t SET v = ? WHERE k = ?"
    assert redact_sql(None) is None


def test_secret_looking_variables_never_leave():
    out = redact_variables(
        {
            "wsrep_sst_auth": "root:pw",
            "ssl_key": "/k.pem",
            "thread_pool_size": "4",
            "server_audit_file_path": "x",
            "empty_password": "",
        }
    )
    assert out["wsrep_sst_auth"] == REDACTED and out["ssl_key"] == REDACTED
    assert out["thread_pool_size"] == "4" and out["server_audit_file_path"] == "x"


def test_short_secret_names_are_caught_and_settings_that_merely_contain_pass_or_key_are_not():
    secrets = ["repl_pwd", "backup_pass", "Sync_Passwd", "x_passphrase", "api_token", "aws_credentials"]
    settings = ["key_buffer_size", "bypass_mode", "compass_heading", "innodb_checksum_algorithm"]
    out = redact_variables({name: "v" for name in secrets + settings})
    assert [n for n in secrets if out[n] != REDACTED] == []
    assert [n for n in settings if out[n] != "v"] == []


def test_chart_draws_lines_breaks_gaps_and_marks_the_moment():
    series = SeriesOut(
        metric="tp_group_queue_length",
        labels={"group": "0"},
        points=[(0.0, 1.0), (1.0, 3.0), (2.0, 2.0), (10.0, 5.0), (11.0, 4.0)],
    )
    svg = svg_chart("Queue", [series], 0.0, 12.0, 5.0, "", False)
    assert svg.count("<polyline") == 2  # the jump from 2 s to 10 s is a gap, not a line
    assert "the moment" in svg and "group 0" in svg
    assert "no data" in svg_chart("Empty", [], 0.0, 1.0, 0.5, "", False)


def test_a_long_line_keeps_each_pixel_columns_lowest_and_highest_point_in_order():
    # 10 points per pixel column over 1000 columns, and one spike in column 500.
    line = [(col + i / 10, float(i % 3)) for col in range(1000) for i in range(10)]
    line[5003] = (500.3, 99.0)
    out = thin(line)
    assert len(out) <= 2 * 1000 < len(line)
    assert [p[0] for p in out] == sorted(p[0] for p in out)
    assert (500.3, 99.0) in out and {p[1] for p in out} == {0.0, 2.0, 99.0}
    short = line[: 2 * WIDTH]
    assert thin(short) == short  # a line the chart can show point by point is left alone


def test_axis_ticks_are_round_numbers_and_round_times():
    assert nice_ticks(1.0) == [0.0, 1.0]  # a 0/1 series: 0 and 1, not 0.55 and 1.1
    assert nice_ticks(45.1) == [0.0, 20.0, 40.0, 60.0]
    assert nice_ticks(0.0) == [0.0, 1.0]
    assert nice_ticks(0.37) == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert nice_ticks(1234.0) == [0.0, 500.0, 1000.0, 1500.0]
    # 10:00:07 to 10:05:07 UTC: every minute on the minute.
    t0 = 1_700_000_407.0
    ticks = time_ticks(t0, t0 + 300, 0)
    assert all(t % 60 == 0 for t in ticks) and len(ticks) == 5
    # Over six hours, hourly ticks fall on the reader's whole hours: 5 h 30 east, on UTC's half hours.
    hours = time_ticks(t0, t0 + 6 * 3600, 330 * 60)
    assert len(hours) == 6 and all((t + 330 * 60) % 3600 == 0 and t % 3600 == 1800 for t in hours)


def test_chart_names_lines_and_units_from_the_catalog_in_the_readers_zone():
    lines = [
        SeriesOut(metric="qps", labels={}, points=[(0.0, 10.0), (60.0, 20.0)]),
        SeriesOut(metric="tps", labels={}, points=[(0.0, 1.0), (60.0, 2.0)]),
    ]
    svg = svg_chart("Throughput", lines, 0.0, 120.0, 50.0, "per second", True, ReportView(330, "GMT+5:30"))
    assert "Questions rate, less Poolscope&#x27;s own" in svg and "commits + rollbacks rate" in svg
    assert ">qps<" not in svg and "(per second)" in svg
    # 1970-01-01 00:00 UTC is 05:30 in that zone; the axis names its zone.
    assert ">05:30:00<" in svg and ">GMT+5:30<" in svg
    assert 'width="100%"' not in svg and "viewBox" in svg
