// Vite build + dev server; the backend serves dist/ and owns /api.
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

const backend = process.env.POOLSCOPE_API ?? 'http://127.0.0.1:8000';

export default defineConfig({
  base: '/',
  plugins: [react()],
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
  },
});
