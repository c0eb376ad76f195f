/**
 * The benchmark report: sections of tables and notes, a list of targets with their verdicts, and
 * two renderings of the same data: plain-text tables for the terminal and Markdown for
 * bench/RESULTS.md. Nothing here measures; it only formats what the sections measured.
 */
import { formatLoad, type MachineInfo } from './machine.ts';

/** One table: a header, rows of already formatted cells, optional notes printed under it. */
export interface Table {
  readonly title?: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Columns from this index on are right-aligned (numbers). Default 1. */
  readonly numericFrom?: number;
  readonly notes?: readonly string[];
}

/** One part of the report (matching, requests, memory, ...). */
export interface Section {
  readonly title: string;
  /** Paragraphs before the tables: method and reading guide. */
  readonly intro?: readonly string[];
  readonly tables: readonly Table[];
  /** Paragraphs after the tables: findings. */
  readonly findings?: readonly string[];
  /** Markdown only: an image under bench/, with its alt text. */
  readonly image?: { readonly path: string; readonly alt: string };
}

/** A target of DESIGN section 9 and what was measured against it. */
export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  /** undefined: not measured in this run (e.g. a quick run skips it), or information only. */
  readonly met: boolean | undefined;
  /**
   * Shown for information, not a target: an absolute figure the host decides (a time on a shared
   * machine), beside the ratio row that is the target.
   */
  readonly information?: boolean;
  readonly note?: string;
}

/** Everything one benchmark run produced. */
export interface BenchReport {
  readonly mode: 'full' | 'quick';
  readonly machine: MachineInfo;
  readonly loadEnd: readonly number[];
  readonly durationMs: number;
  /** The docs/performance.md paragraph on single-run limits, derived from the measurements. */
  readonly limits: readonly string[];
  readonly targets: readonly TargetCheck[];
  readonly sections: readonly Section[];
  /** How noisy the measurements were, in words. */
  readonly noise: readonly string[];
}

const verdict = (check: Pick<TargetCheck, 'met' | 'information'>): string =>
  check.information ? 'information' : check.met === undefined ? 'not measured' : check.met ? 'met' : 'MISSED';

/** The targets as a table. */
export function targetTable(targets: readonly TargetCheck[]): Table {
  return {
    header: ['target (DESIGN section 9)', 'measured', 'verdict'],
    numericFrom: 3,
    rows: targets.map((t) => [t.target, t.measured, verdict(t)]),
    notes: targets.filter((t) => t.note !== undefined).map((t) => `${t.target}: ${t.note}`),
  };
}

/** A table as aligned plain text, for the terminal. */
export function renderTextTable(table: Table): string {
  const numericFrom = table.numericFrom ?? 1;
  const widths = table.header.map((title, column) =>
    Math.max(title.length, ...table.rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column >= numericFrom ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const lines: string[] = [];
  if (table.title !== undefined) lines.push(table.title);
  lines.push(line(table.header), widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of table.rows) lines.push(line(row));
  for (const note of table.notes ?? []) lines.push(`  ${note}`);
  return lines.join('\n');
}

/** A table cell's text in Markdown: pipes escaped, one line. */
export const escapeMarkdownCell = (cell: string): string => cell.replaceAll('|', '\\|').replaceAll('\n', ' ');
const escapeCell = escapeMarkdownCell;

/** A table as GitHub-flavoured Markdown. */
export function renderMarkdownTable(table: Table): string {
  const numericFrom = table.numericFrom ?? 1;
  const lines: string[] = [];
  if (table.title !== undefined) lines.push(`**${table.title}**`, '');
  lines.push(`| ${table.header.map(escapeCell).join(' | ')} |`);
  lines.push(`| ${table.header.map((_, column) => (column >= numericFrom ? '---:' : ':---')).join(' | ')} |`);
  for (const row of table.rows) lines.push(`| ${row.map(escapeCell).join(' | ')} |`);
  if ((table.notes ?? []).length > 0) lines.push('', ...(table.notes ?? []).map((note) => `- ${note}`));
  return lines.join('\n');
}

function machineLines(report: BenchReport): string[] {
  const { machine } = report;
  return [
    `CPU: ${machine.cpuModel}, ${machine.cores} cores; memory ${machine.memoryGiB.toFixed(1)} GiB; ${machine.platform}`,
    `Node.js ${machine.node}; started ${machine.date}; took ${(report.durationMs / 1000).toFixed(0)} s`,
    `Load average (1/5/15 min): ${formatLoad(machine.loadStart)} at the start, ${formatLoad(report.loadEnd)} at the end`,
    `Commit: ${machine.commit}`,
  ];
}

/** The whole report for the terminal. */
export function renderText(report: BenchReport): string {
  const out: string[] = [`news-alerts benchmark (${report.mode})`, ...machineLines(report), ''];
  for (const section of report.sections) {
    out.push(`== ${section.title} ==`);
    for (const table of section.tables) out.push(renderTextTable(table), '');
    for (const finding of section.findings ?? []) out.push(`* ${finding}`);
    if ((section.findings ?? []).length > 0) out.push('');
  }
  out.push('== Targets ==', renderTextTable(targetTable(report.targets)), '');
  return out.join('\n');
}

/** The whole report as bench/RESULTS.md. */
export function renderMarkdown(report: BenchReport): string {
  const out: string[] = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench${report.mode === 'quick' ? ' -- --quick' : ''}\` (bench/run.ts); do not edit by hand.`,
    report.mode === 'quick'
      ? 'This is a **quick** run: smaller inputs than the targets name, for checking that the benchmark works.'
      : 'Every figure below comes from this one run.',
    '',
    '## Single-run limits',
    '',
    '_For docs/performance.md (DESIGN section 10)._',
    '',
    ...report.limits.flatMap((paragraph) => [paragraph, '']),
    '## Machine',
    '',
    ...machineLines(report).map((line) => `- ${line}`),
    '',
    '## Targets',
    '',
    renderMarkdownTable(targetTable(report.targets)),
    '',
    '## Noise',
    '',
    ...report.noise.flatMap((paragraph) => [paragraph, '']),
  ];
  for (const section of report.sections) out.push(...markdownSectionLines(section));
  return `${out.join('\n').trimEnd()}\n`;
}

/** One section as Markdown lines (its `##` heading first, a blank line last). */
export function markdownSectionLines(section: Section): string[] {
  const out = [`## ${section.title}`, ''];
  for (const paragraph of section.intro ?? []) out.push(paragraph, '');
  if (section.image !== undefined) out.push(`![${section.image.alt}](${section.image.path})`, '');
  for (const table of section.tables) out.push(renderMarkdownTable(table), '');
  for (const finding of section.findings ?? []) out.push(`- ${finding}`);
  if ((section.findings ?? []).length > 0) out.push('');
  return out;
}
