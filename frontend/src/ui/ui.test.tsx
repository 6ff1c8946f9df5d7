import { fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { toCsv } from '../lib/csv';
import { Dialog } from './Dialog';
import { Help, MetricHelp } from './Help';

function Opener() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        open
      </button>
      {open ? (
        <Dialog label="Apply x" onClose={() => setOpen(false)} testId="dlg">
          <input aria-label="first" />
          <button type="button">middle</button>
          <button type="button">last</button>
        </Dialog>
      ) : null}
    </>
  );
}

describe('Dialog', () => {
  it('takes focus, keeps Tab inside, closes on Escape and gives focus back', () => {
    render(<Opener />);
    const opener = screen.getByRole('button', { name: 'open' });
    opener.focus();
    fireEvent.click(opener);
    const dialog = screen.getByRole('dialog', { name: 'Apply x' });
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    expect(document.activeElement).toBe(screen.getByLabelText('first'));
    screen.getByRole('button', { name: 'last' }).focus();
    fireEvent.keyDown(document, { key: 'Tab' });
    expect(document.activeElement).toBe(screen.getByLabelText('first'));
    fireEvent.keyDown(document, { key: 'Tab', shiftKey: true });
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'last' }));
    fireEvent.keyDown(document, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.activeElement).toBe(opener);
  });
});

describe('Help', () => {
  it("shows the catalog's help and unit of a metric, and closes on Escape", () => {
    render(<MetricHelp metrics={['tp_queue_wait_max_ms', 'not_a_metric']} label="Queueing time" testId="h" />);
    const btn = screen.getByRole('button', { name: 'About Queueing time' });
    expect(btn.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(btn);
    const text = screen.getByTestId('h-text').textContent;
    expect(text).toContain('longest queueing time of a queued request');
    expect(text).toContain('milliseconds');
    expect(text).toContain('tp_queue_wait_max_ms');
    expect(text).not.toContain('not_a_metric');
    fireEvent.keyDown(document, { key: 'Escape' });
    expect(screen.queryByTestId('h-text')).toBeNull();
  });

  it('explains a figure that is not a metric in its own words', () => {
    render(<Help label="pos">Its place in the queue.</Help>);
    fireEvent.click(screen.getByRole('button', { name: 'About pos' }));
    expect(screen.getByRole('note').textContent).toBe('Its place in the queue.');
  });
});

describe('CSV', () => {
  it('quotes what needs quoting and writes every row', () => {
    const csv = toCsv(
      [
        { a: 1, b: 'plain' },
        { a: null, b: 'SELECT "x", 1\nFROM t' },
      ],
      [
        { header: 'a', value: (r) => r.a },
        { header: 'b', value: (r) => r.b },
      ],
    );
    expect(csv).toBe('a,b\r\n1,plain\r\n,"SELECT ""x"", 1\nFROM t"\r\n');
  });
});
