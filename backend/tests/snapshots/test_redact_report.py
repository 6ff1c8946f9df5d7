"""SQL literal redaction, secret variables, and the offline report's charts (pure functions)."""

from __future__ import annotations

from poolscope.schemas import SeriesOut
from poolscope.snapshots.redact import REDACTED, redact_sql, redact_variables
from poolscope.snapshots.report import WIDTH, svg_chart, thin


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
