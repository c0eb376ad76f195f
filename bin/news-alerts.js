#!/usr/bin/env node
// Launcher of the `news-alerts` CLI ("bin" in package.json): registers tsx so Node can load the
// TypeScript sources directly (no build step), then runs bin/news-alerts.ts.
import { register } from 'tsx/esm/api';

register();
await import('./news-alerts.ts');
