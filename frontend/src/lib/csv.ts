// Tables as CSV files (RFC 4180: comma-separated, quoted where needed, CRLF), for a ticket or a spreadsheet.
import { saveBlob } from '../api/client';

export interface CsvColumn<T> {
  header: string;
  value: (row: T) => string | number | null | undefined;
}

function cell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv<T>(rows: readonly T[], columns: readonly CsvColumn<T>[]): string {
  const lines = [columns.map((c) => cell(c.header)).join(',')];
  for (const r of rows) lines.push(columns.map((c) => cell(c.value(r))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** Save the rows as `name`.csv. */
export function downloadCsv<T>(name: string, rows: readonly T[], columns: readonly CsvColumn<T>[]): void {
  saveBlob(new Blob([toCsv(rows, columns)], { type: 'text/csv;charset=utf-8' }), `${name}.csv`);
}
