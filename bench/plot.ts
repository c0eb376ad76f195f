/**
 * A log-log line chart as a standalone SVG, written from the benchmark's own numbers. A plotting
 * library would add a dependency (and, for PNG, a native canvas) to draw a few lines; SVG is text,
 * renders on GitHub, and diffs readably when the numbers change.
 */

/** One line of the chart. */
export interface PlotSeries {
  readonly name: string;
  readonly color: string;
  readonly dashed?: boolean;
  /** [x, y] points, x and y > 0. */
  readonly points: readonly (readonly [number, number])[];
}

/** A horizontal reference line (a target). */
export interface PlotReference {
  readonly y: number;
  readonly label: string;
}

/** What to draw. */
export interface LogLogPlot {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly PlotSeries[];
  readonly references?: readonly PlotReference[];
  /** Text next to single points, e.g. a ratio. */
  readonly annotations?: readonly { readonly x: number; readonly y: number; readonly text: string }[];
  readonly width?: number;
  readonly height?: number;
}

const escapeXml = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Decades covering [min, max]: 10^floor(log10 min) .. 10^ceil(log10 max). */
function decades(min: number, max: number): number[] {
  const from = Math.floor(Math.log10(min));
  const to = Math.max(from + 1, Math.ceil(Math.log10(max)));
  return Array.from({ length: to - from + 1 }, (_, i) => 10 ** (from + i));
}

/** `1k`, `100k`, `1M`, `10 ms`, `1 s`, `1,000 s`. */
function tickLabel(value: number, unit: 'count' | 'ms'): string {
  if (unit === 'ms') {
    if (value < 1000) return `${value < 1 ? value.toPrecision(1) : value} ms`;
    return `${(value / 1000).toLocaleString('en-US')} s`;
  }
  if (value >= 1e6) return `${value / 1e6}M`;
  if (value >= 1e3) return `${value / 1e3}k`;
  return String(value);
}

/** Renders the chart as an SVG document. */
export function logLogPlotSvg(plot: LogLogPlot): string {
  const width = plot.width ?? 760;
  const height = plot.height ?? 460;
  const margin = { top: 48, right: 210, bottom: 56, left: 76 };
  const innerWidth = width - margin.left - margin.right;
  const innerHeight = height - margin.top - margin.bottom;
  const xs = plot.series.flatMap((s) => s.points.map(([x]) => x));
  const ys = [
    ...plot.series.flatMap((s) => s.points.map(([, y]) => y)),
    ...(plot.references ?? []).map((r) => r.y),
  ].filter((y) => y > 0);
  const xTicks = decades(Math.min(...xs), Math.max(...xs));
  const yTicks = decades(Math.min(...ys), Math.max(...ys));
  const [xMin, xMax] = [xTicks[0] ?? 1, xTicks[xTicks.length - 1] ?? 10];
  const [yMin, yMax] = [yTicks[0] ?? 1, yTicks[yTicks.length - 1] ?? 10];
  const sx = (x: number) =>
    margin.left + ((Math.log10(x) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * innerWidth;
  const sy = (y: number) =>
    margin.top +
    innerHeight -
    ((Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * innerHeight;
  const f = (n: number) => n.toFixed(1);

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12" role="img">`,
    `<title>${escapeXml(plot.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${margin.left}" y="24" font-size="15" font-weight="bold">${escapeXml(plot.title)}</text>`,
  ];
  for (const x of xTicks) {
    parts.push(
      `<line x1="${f(sx(x))}" y1="${margin.top}" x2="${f(sx(x))}" y2="${margin.top + innerHeight}" stroke="#e5e5e5"/>`,
      `<text x="${f(sx(x))}" y="${margin.top + innerHeight + 18}" text-anchor="middle" fill="#444">${tickLabel(x, 'count')}</text>`,
    );
  }
  for (const y of yTicks) {
    parts.push(
      `<line x1="${margin.left}" y1="${f(sy(y))}" x2="${margin.left + innerWidth}" y2="${f(sy(y))}" stroke="#e5e5e5"/>`,
      `<text x="${margin.left - 8}" y="${f(sy(y) + 4)}" text-anchor="end" fill="#444">${tickLabel(y, 'ms')}</text>`,
    );
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${innerWidth}" height="${innerHeight}" fill="none" stroke="#999"/>`,
    `<text x="${margin.left + innerWidth / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(plot.xLabel)}</text>`,
    `<text transform="translate(18 ${margin.top + innerHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(plot.yLabel)}</text>`,
  );
  for (const reference of plot.references ?? []) {
    const y = f(sy(reference.y));
    parts.push(
      `<line x1="${margin.left}" y1="${y}" x2="${margin.left + innerWidth}" y2="${y}" stroke="#c62828" stroke-dasharray="2 4"/>`,
      `<text x="${margin.left + 6}" y="${Number(y) - 6}" fill="#c62828">${escapeXml(reference.label)}</text>`,
    );
  }
  plot.series.forEach((series, index) => {
    const points = [...series.points].sort((a, b) => a[0] - b[0]);
    const path = points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${f(sx(x))},${f(sy(y))}`).join(' ');
    const dash = series.dashed ? ' stroke-dasharray="7 5"' : '';
    parts.push(`<path d="${path}" fill="none" stroke="${series.color}" stroke-width="2.2"${dash}/>`);
    for (const [x, y] of points) {
      parts.push(`<circle cx="${f(sx(x))}" cy="${f(sy(y))}" r="3.5" fill="${series.color}"/>`);
    }
    const legendY = margin.top + 12 + index * 22;
    const legendX = margin.left + innerWidth + 16;
    parts.push(
      `<line x1="${legendX}" y1="${legendY}" x2="${legendX + 28}" y2="${legendY}" stroke="${series.color}" stroke-width="2.2"${dash}/>`,
      `<text x="${legendX + 36}" y="${legendY + 4}">${escapeXml(series.name)}</text>`,
    );
  });
  for (const note of plot.annotations ?? []) {
    parts.push(
      `<text x="${f(sx(note.x) + 8)}" y="${f(sy(note.y) + 4)}" fill="#333" font-size="11">${escapeXml(note.text)}</text>`,
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
