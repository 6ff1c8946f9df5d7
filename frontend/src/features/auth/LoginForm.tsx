// Log-in form and the top-bar user menu; viewers read, operators may apply and revert changes.
import { useState, type FormEvent } from 'react';
import { useAuth } from '../../api/auth';
import { errorMessage } from '../../api/client';
import { navigate } from '../../app/router';
import { Notice } from '../../ui/ui';
import './auth.css';

export function LoginForm({ next = '/' }: { next?: string }) {
  const auth = useAuth();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await auth.login(username, password);
      setPassword('');
      navigate(next);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="page login-page" data-testid="login-page">
      <form className="panel login-form" onSubmit={submit} aria-label="Log in" data-testid="login-form">
        <h2>Log in</h2>
        {auth.user ? (
          <p className="muted small" data-testid="login-current">
            Logged in as {auth.user.name} ({auth.user.role}).
          </p>
        ) : null}
        <label>
          User name
          <input
            name="username"
            autoComplete="username"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            required
            data-testid="login-username"
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
            data-testid="login-password"
          />
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy} data-testid="login-submit">
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        {error ? (
          <Notice tone="bad" title="Login failed" testId="login-error">
            {error}
          </Notice>
        ) : null}
        {auth.note && !auth.user ? (
          <p className="muted small" data-testid="login-note">
            {auth.note}
          </p>
        ) : null}
      </form>
    </div>
  );
}

/** Top-bar: "Log in" link, or the user with role and a log-out button. */
export function UserMenu() {
  const auth = useAuth();
  if (auth.status === 'unknown') return null;
  if (!auth.user) {
    return (
      <a
        href="/login"
        className="user-menu"
        data-testid="login-link"
        onClick={(e) => {
          e.preventDefault();
          navigate(`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
        }}
      >
        Log in
      </a>
    );
  }
  return (
    <span className="user-menu" data-testid="user-menu">
      <span data-testid="user-name">{auth.user.name}</span>{' '}
      <span className="badge badge-muted" data-testid="user-role">
        {auth.user.role}
      </span>{' '}
      <button type="button" className="link-btn" onClick={() => void auth.logout()} data-testid="logout">
        Log out
      </button>
    </span>
  );
}
