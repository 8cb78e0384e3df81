import { defaultClientConditions, defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { ikonateIcons, neuroglancerWorkers } from './vite-plugins/neuroglancer-plugins.ts';

// The server (port 4455) serves the HTTP API and both WebSocket endpoints; in development Vite
// proxies them so the browser talks to one origin, exactly as in production where the server
// serves client/dist itself.
const SERVER = 'http://localhost:4455';

export default defineConfig({
  // Resolve everything relative to this file, whatever directory `vite` is started from.
  root: new URL('.', import.meta.url).pathname,
  // Absolute asset URLs: the SPA is served at nested paths such as /w/:id.
  base: '/',
  plugins: [ikonateIcons(), neuroglancerWorkers(), react()],
  // Neuroglancer's workers import the same package: they need the same fixes, as ES modules.
  worker: { format: 'es', plugins: () => [ikonateIcons(), neuroglancerWorkers()] },
  optimizeDeps: {
    // Neuroglancer ships ES modules with worker entry points that pre-bundling would break.
    exclude: ['neuroglancer'],
    entries: ['index.html', '../node_modules/neuroglancer/lib/main.bundle.js', '../node_modules/neuroglancer/lib/chunk_worker.bundle.js', '../node_modules/neuroglancer/lib/async_computation.bundle.js'],
  },
  resolve: {
    conditions: [...defaultClientConditions],
    // One copy of each of these, or Yjs types / ProseMirror plugins stop recognising each other.
    dedupe: ['yjs', 'y-protocols', 'lib0', '@tiptap/pm', '@codemirror/state', '@codemirror/view'],
  },
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 2000,
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: SERVER, changeOrigin: true },
      '/collab': { target: SERVER, ws: true, changeOrigin: true },
      '/yjs': { target: SERVER, ws: true, changeOrigin: true },
      '/volumes': { target: SERVER, changeOrigin: true },
    },
  },
});
