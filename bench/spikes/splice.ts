/**
 * Puts the spike part's section and Targets rows into an existing bench/RESULTS.md, replacing the
 * ones an earlier run put there and leaving every other figure as the full run wrote it. Used by
 * `bench/run.ts --only spikes` (full mode): the spike part is deterministic and independent of the
 * other parts, so its figures can be refreshed without re-running the whole bench; the section
 * says which run and commit wrote it.
 */
import { escapeMarkdownCell, markdownSectionLines, type Section, type TargetCheck } from '../report.ts';

/** Targets rows and notes of this part start with this word. */
export const SPIKE_TARGET_PREFIX = 'Spikes,';

const verdict = (met: boolean | undefined): string => (met === undefined ? 'not measured' : met ? 'met' : 'MISSED');

export function spliceSpikeResults(
  markdown: string,
  section: Section,
  targets: readonly TargetCheck[],
  provenance: string,
): string {
  const lines = markdown.replace(/\n+$/, '').split('\n');
  // Drop the previous section (its heading to the next `## ` or the end).
  const start = lines.findIndex(
    (line) => line.startsWith('## ') && line.includes(section.title.replace(/^\d+\.\s*/, '')),
  );
  if (start >= 0) {
    const next = lines.findIndex((line, index) => index > start && line.startsWith('## '));
    lines.splice(start, (next < 0 ? lines.length : next) - start);
  }
  // Replace this part's Targets rows and notes.
  const targetsAt = lines.indexOf('## Targets');
  if (targetsAt < 0) throw new Error('bench/RESULTS.md has no "## Targets" section; run the full bench once');
  const end = lines.findIndex((line, index) => index > targetsAt && line.startsWith('## '));
  const body = lines.slice(targetsAt + 1, end < 0 ? lines.length : end);
  const kept = body.filter(
    (line) => !line.startsWith(`| ${SPIKE_TARGET_PREFIX}`) && !line.startsWith(`- ${SPIKE_TARGET_PREFIX}`),
  );
  const lastRow = kept.reduce((last, line, index) => (line.startsWith('|') ? index : last), -1);
  const rows = targets.map((t) => `| ${[t.target, t.measured, verdict(t.met)].map(escapeMarkdownCell).join(' | ')} |`);
  kept.splice(lastRow + 1, 0, ...rows);
  const notes = targets.filter((t) => t.note !== undefined).map((t) => `- ${t.target}: ${t.note}`);
  const lastNote = kept.reduce((last, line, index) => (line.startsWith('- ') ? index : last), -1);
  if (notes.length > 0) {
    if (lastNote >= 0) kept.splice(lastNote + 1, 0, ...notes);
    else kept.splice(lastRow + 1 + rows.length, 0, '', ...notes);
  }
  lines.splice(targetsAt + 1, body.length, ...kept);
  const spliced = markdownSectionLines({ ...section, intro: [provenance, ...(section.intro ?? [])] });
  return `${[...lines, '', ...spliced]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
