import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dashboard and GraphiQL, built into web/dist and served by our own HTTPS server at / and
// /graphql. Every script is a file of its own: the pages run under a CSP without 'unsafe-inline'.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  // GraphiQL's editor (Monaco) runs its language services in module workers, bundled as files of their own.
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline <script> for the module preload polyfill: every target browser has modulepreload.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    // GraphiQL's editor is one large chunk; it loads only on /graphql.
    chunkSizeWarningLimit: 4000,
    rollupOptions: {
      input: { app: fileURLToPath(new URL('index.html', import.meta.url)), graphiql: fileURLToPath(new URL('graphiql.html', import.meta.url)) },
      // react-router marks its modules "use client" for React Server Components, which a single-page app has not.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
