// Tiny presentational building blocks (badges, notices, panels, expandable SQL) shared by all pages.
import { useId, useState, type ReactNode } from 'react';
import { navigate } from '../app/router';
import { truncate } from '../lib/format';

export type Tone = 'ok' | 'bad' | 'warn' | 'info' | 'muted';

export function Badge({ tone, children, title, testId }: { tone: Tone; children: ReactNode; title?: string; testId?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title} data-testid={testId}>
      {children}
    </span>
  );
}

export function Notice({
  tone,
  title,
  children,
  testId,
}: {
  tone: Tone;
  title: ReactNode;
  children?: ReactNode;
  testId?: string;
}) {
  return (
    <div className={`notice notice-${tone}`} role={tone === 'bad' ? 'alert' : 'status'} data-testid={testId}>
      <div className="notice-title">{title}</div>
      {children ? <div className="notice-body">{children}</div> : null}
    </div>
  );
}

export function Panel({
  title,
  help,
  extra,
  children,
  testId,
  className,
}: {
  title: ReactNode;
  /** The "?" beside the title (ui/Help.tsx), outside the heading so it does not rename the region. */
  help?: ReactNode;
  extra?: ReactNode;
  children: ReactNode;
  testId?: string;
  className?: string;
}) {
  // The heading names the region, so screen readers and getByRole('region', { name }) find it.
  const headingId = useId();
  return (
    <section className={`panel ${className ?? ''}`} data-testid={testId} aria-labelledby={headingId}>
      <header className="panel-head">
        <h2 id={headingId}>{title}</h2>
        {help}
        {extra ? <div className="panel-extra">{extra}</div> : null}
      </header>
      <div className="panel-body">{children}</div>
    </section>
  );
}

/** SQL text cut to one line, expandable in place. */
export function SqlText({ sql, max = 80 }: { sql: string | null | undefined; max?: number }) {
  const [open, setOpen] = useState(false);
  if (!sql) return <span className="muted">—</span>;
  const short = truncate(sql, max);
  const long = short !== sql.replace(/\s+/g, ' ').trim();
  if (!long) return <code className="sql">{short}</code>;
  return (
    <span className="sql-wrap">
      {open ? <pre className="sql sql-full">{sql}</pre> : <code className="sql">{short}</code>}
      <button type="button" className="link-btn" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? 'less' : 'more'}
      </button>
    </span>
  );
}

/** In-app link using history navigation; modified clicks keep browser behaviour (new tab etc.). */
export function Link({
  href,
  children,
  className,
  testId,
}: {
  href: string;
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  return (
    <a
      href={href}
      className={className}
      data-testid={testId}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

export function Stat({
  label,
  value,
  tone,
  testId,
  title,
}: {
  label: string;
  value: ReactNode;
  tone?: Tone;
  testId?: string;
  title?: string;
}) {
  return (
    <div className={`stat ${tone ? `stat-${tone}` : ''}`} data-testid={testId} title={title}>
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}
