"""Applies redact.py's rules to a whole snapshot document: at capture, and again on import, since an
imported file comes from another installation with other rules (or none)."""

from __future__ import annotations

from poolscope.snapshots.document import SnapshotDocument
from poolscope.snapshots.redact import REDACTED, is_secret_name, redact_sql, redact_variables


def redact_document_sql(doc: SnapshotDocument) -> None:
    """SQL literals replaced by `?` everywhere a snapshot holds SQL text."""
    state = doc.state
    for q in state.queue:
        q.info, q.last_sql = redact_sql(q.info), redact_sql(q.last_sql)
    for s in state.sessions:
        s.info = redact_sql(s.info)
    for group in (*state.holders, *doc.holders):
        for holder in group.holders:
            holder.info = redact_sql(holder.info)
            for blocker in holder.blockers:
                blocker.statement = redact_sql(blocker.statement)
    if state.transactions:
        for t in state.transactions.items:
            t.query = redact_sql(t.query)
    for row in doc.server_tables.processlist:
        if isinstance(row.get("info"), str):
            row["info"] = redact_sql(row["info"])  # type: ignore[arg-type]
    for row in doc.server_tables.innodb_trx:
        if isinstance(row.get("trx_query"), str):
            row["trx_query"] = redact_sql(row["trx_query"])  # type: ignore[arg-type]
    for alert in doc.alerts:
        alert.description = redact_sql(alert.description) or ""
    doc.redacted_sql = True


def redact_document_variables(doc: SnapshotDocument) -> None:
    """Secret-looking variables, wherever the document names one: the poll's variables, the server's
    SHOW GLOBAL VARIABLES, and the values of changes made to such a variable."""
    doc.state.variables = redact_variables(doc.state.variables)
    doc.server_tables.global_variables = redact_variables(doc.server_tables.global_variables)
    for change in doc.variable_changes:
        if is_secret_name(change.variable):
            change.old_value = REDACTED if change.old_value else change.old_value
            change.new_value = REDACTED if change.new_value else change.new_value
