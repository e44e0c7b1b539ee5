import { defineConfig } from "vite";

// The console is built into the Go package that embeds it
// (internal/console/dist/app); see docs/ARCHITECTURE.md, "The console".
export default defineConfig({
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "../internal/console/dist/app",
    emptyOutDir: true,
    // No inline scripts or data: URLs for scripts: the server's
    // Content-Security-Policy allows scripts from 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
  server: { proxy: { "/api": { target: "http://127.0.0.1:8080", ws: true } } },
});
