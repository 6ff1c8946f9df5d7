// Vitest setup: unmount rendered trees between tests; each test starts with no session and no other tab to ask.
import { cleanup } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import { resetSessionForTests } from '../api/session';

beforeEach(() => resetSessionForTests());
afterEach(() => cleanup());
