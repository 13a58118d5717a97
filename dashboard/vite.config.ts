import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The dashboard, served by the AnswerDesk server under /dashboard/ (src/api/dashboard). */
export default defineConfig({
  root: here,
  base: '/dashboard/',
  plugins: [react()],
  build: {
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    assetsDir: 'assets',
    // Everything the app loads is its own file: nothing is inlined as a data: URL the CSP would refuse.
    assetsInlineLimit: 0,
    rollupOptions: {
      input: { main: path.join(here, 'index.html'), preview: path.join(here, 'preview.html') },
    },
  },
});
