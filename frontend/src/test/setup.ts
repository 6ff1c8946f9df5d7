// Vitest setup: unmount rendered trees between tests; each test starts with no session, no other tab
// to ask, no open stream and the default preferences. The waits are generous: under a loaded CPU a
// first render can take seconds, and a wait that gives up early is a flaky test, not a finding.
import { cleanup, configure } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import { resetLiveForTests } from '../api/live';
import { resetSessionForTests } from '../api/session';
import { resetPrefsForTests } from '../lib/prefs';

configure({ asyncUtilTimeout: 10_000 });

beforeEach(() => {
  resetSessionForTests();
  resetPrefsForTests();
});
afterEach(() => {
  cleanup();
  resetLiveForTests();
});
