#!/usr/bin/env node
// Launcher of the `news-alerts` CLI ("bin" in package.json): runs the built bundle in dist/ (plain
// JavaScript; `npm run build` makes it from bin/news-alerts.ts, and `prepare` runs that build on
// `npm ci`, `npm link` and `npm pack`). No TypeScript loader at run time.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const bundle = new URL('../dist/news-alerts.js', import.meta.url);
if (!existsSync(bundle)) {
  // cli/output.ts is part of the bundle that is missing: control and format characters of the
  // path are escaped here the same visible way.
  const root = dirname(dirname(fileURLToPath(import.meta.url))).replace(
    /[\p{Cc}\p{Cf}]/gu,
    (c) => `\\u{${c.codePointAt(0).toString(16)}}`,
  );
  process.stderr.write(
    `news-alerts: the CLI is not built (dist/news-alerts.js is missing): run \`npm run build\` in ${root}\n`,
  );
  process.exit(1);
}
await import(bundle.href);
