/**
 * Section 4 of the benchmark (cold start) on its own, for work on the handler's import cost
 * without the five-minute full run: `npx tsx bench/cold-start-only.ts [--repetitions N]
 * [--no-profile]`. Prints the cold-start target and the section as Markdown; writes nothing.
 * Same bundles, options and interleaving as `npm run bench` (bench/cold-start.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../lib/constructs/news-alerts-function.ts';
import {
  buildAttributionBundles,
  handlerEnvironment,
  profileImport,
  targetBundles,
  timeImports,
} from './cold-start.ts';
import { renderMarkdownTable, targetTable } from './report.ts';
import { ATTRIBUTION_BUNDLES, type ColdStartResults, coldStartSection, coldStartTargets } from './sections.ts';

const { values } = parseArgs({
  options: {
    repetitions: { type: 'string', default: '15' },
    'no-profile': { type: 'boolean', default: false },
  },
});
const repetitions = Number(values.repetitions);
if (!Number.isInteger(repetitions) || repetitions < 1) throw new Error('--repetitions must be a whole number ≥ 1');

const directory = mkdtempSync(join(tmpdir(), 'news-alerts-cold-start-'));
try {
  const loadStart = os.loadavg();
  const { handler, bare } = await targetBundles(directory, projectRoot);
  const attributionBundles = await buildAttributionBundles(ATTRIBUTION_BUNDLES, directory, projectRoot);
  // One interleaved series: the target's two bundles and the attribution are measured alike.
  const [handlerTimes, bareTimes, ...attribution] = timeImports([handler, bare, ...attributionBundles], repetitions);
  if (handlerTimes === undefined || bareTimes === undefined) throw new Error('no import times');
  const results: ColdStartResults = {
    handler: handlerTimes,
    bare: bareTimes,
    repetitions,
    attribution: [bareTimes, handlerTimes, ...attribution],
    profile: values['no-profile'] ? [] : profileImport(handler.file, handlerEnvironment, projectRoot, 5),
  };
  const section = coldStartSection(results);
  const out = [renderMarkdownTable(targetTable(coldStartTargets(results))), '', `## ${section.title}`, ''];
  for (const paragraph of section.intro ?? []) out.push(paragraph, '');
  for (const table of section.tables) out.push(renderMarkdownTable(table), '');
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  out.push(`Load average ${load(loadStart)} → ${load(os.loadavg())} on ${os.cpus().length} cores.`);
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
