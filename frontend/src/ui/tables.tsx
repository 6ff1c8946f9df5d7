// What the long tables share: the worst 10 rows first with "show all (N)", and a CSV of all of them.
import { useState } from 'react';
import { downloadCsv, type CsvColumn } from '../lib/csv';

/** Rows shown before "show all": enough to see the incident, short enough to see the page. */
export const CAPPED_ROWS = 10;

/** The first `cap` of `rows` (already sorted worst first), or all of them once asked. */
export function useCapped<T>(rows: readonly T[], cap = CAPPED_ROWS) {
  const [all, setAll] = useState(false);
  return { shown: all ? rows : rows.slice(0, cap), all, setAll, capped: rows.length > cap };
}

/** Goes above its table: below it, the live rows re-rendering every poll would move it under the pointer. */
export function ShowAll({
  total,
  all,
  setAll,
  what,
  testId,
}: {
  total: number;
  all: boolean;
  setAll: (all: boolean) => void;
  /** What the rows are, worst first ("longest waiters"). */
  what: string;
  testId: string;
}) {
  return (
    <div className="table-note" data-testid={testId}>
      {all ? `All ${total} ${what}.` : `The ${Math.min(CAPPED_ROWS, total)} ${what} of ${total}.`}{' '}
      <button type="button" className="link-btn" onClick={() => setAll(!all)} data-testid={`${testId}-toggle`}>
        {all ? `show the first ${CAPPED_ROWS}` : `show all (${total})`}
      </button>
    </div>
  );
}

/** "CSV": every row of the table (not only those shown) as a file. */
export function CsvButton<T>({
  name,
  rows,
  columns,
  testId,
}: {
  name: string;
  rows: readonly T[];
  columns: readonly CsvColumn<T>[];
  testId: string;
}) {
  return (
    <button
      type="button"
      className="btn btn-small"
      disabled={!rows.length}
      title="Save every row as a CSV file"
      onClick={() => downloadCsv(name, rows, columns)}
      data-testid={testId}
    >
      CSV
    </button>
  );
}
