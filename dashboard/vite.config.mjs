// The dashboard's build: a single-page app in dist/dashboard/, served by the task center at `/`.
// `npm run dev:dashboard` serves it with hot reload against a task center on 127.0.0.1:8080.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the task center's Content-Security-Policy allows only files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080', '/openapi.json': 'http://127.0.0.1:8080' },
  },
});
