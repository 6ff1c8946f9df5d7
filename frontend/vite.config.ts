// Vite build + dev server; the backend serves dist/ and owns /api.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineConfig, type Plugin } from 'vitest/config';
import react from '@vitejs/plugin-react';

// Swagger UI's files for /api/docs (backend/poolscope/api/docs.py), from the pinned swagger-ui-dist:
// served by Poolscope itself, never from a CDN. public/api-docs/init.js starts it (no inline script).
const SWAGGER_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE'];

function swaggerUi(): Plugin {
  return {
    name: 'poolscope-swagger-ui',
    apply: 'build',
    closeBundle() {
      const from = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
      const to = join('dist', 'api-docs');
      mkdirSync(to, { recursive: true });
      for (const name of SWAGGER_FILES) copyFileSync(join(from, name), join(to, name));
    },
  };
}

const backend = process.env.POOLSCOPE_API ?? 'http://127.0.0.1:8000';

export default defineConfig({
  base: '/',
  plugins: [react(), swaggerUi()],
  server: {
    proxy: {
      // SSE (/api/live) goes through the same proxy; http-proxy streams it unbuffered.
      '/api': { target: backend, changeOrigin: false },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // The real budget is enforced by `npm run size` (200 kB gzipped JS on first load); the main chunk may be large.
    chunkSizeWarningLimit: 800,
  },
  test: {
    environment: 'jsdom',
    globals: true,
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    // Under a loaded CPU a first render takes seconds: a test waits (src/test/setup.ts) rather than fails.
    testTimeout: 30_000,
  },
});
