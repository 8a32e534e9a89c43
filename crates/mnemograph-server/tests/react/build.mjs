// Bundles the page into dist/chat.js with the pinned esbuild: `node build.mjs`.
import { build } from "esbuild";

await build({
  entryPoints: ["src/main.jsx"],
  bundle: true,
  minify: true,
  format: "esm",
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  outfile: "dist/chat.js",
  logLevel: "warning",
});
