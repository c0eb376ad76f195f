/** Small statistics helpers of the benchmark report. */

/** The `p`-th percentile (0..100) of `values` by linear interpolation; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const a = sorted[low] ?? Number.NaN;
  const b = sorted[high] ?? Number.NaN;
  return a + (b - a) * (rank - low);
}

/** The median of `values`; NaN for no values. */
export const median = (values: readonly number[]): number => percentile(values, 50);

/**
 * Total length of the union of `[start, end)` intervals: how long at least one of them was in
 * progress. Concurrent requests to one service count once, so this is a share of wall time.
 */
export function unionLength(intervals: readonly { readonly start: number; readonly end: number }[]): number {
  const sorted = [...intervals].filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  let total = 0;
  let currentStart = Number.NEGATIVE_INFINITY;
  let currentEnd = Number.NEGATIVE_INFINITY;
  for (const { start, end } of sorted) {
    if (start > currentEnd) {
      if (currentEnd > currentStart) total += currentEnd - currentStart;
      currentStart = start;
      currentEnd = end;
    } else if (end > currentEnd) {
      currentEnd = end;
    }
  }
  if (currentEnd > currentStart) total += currentEnd - currentStart;
  return total;
}

/** `value` with thousands separators and `digits` decimals (`12,345.6`). */
export function formatNumber(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return value > 0 ? '∞' : value < 0 ? '-∞' : 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Milliseconds, with decimals only where they matter (`0.42 ms`, `12.3 ms`, `1,234 ms`). */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return `${formatNumber(ms, 2)} ms`;
  if (ms < 100) return `${formatNumber(ms, 1)} ms`;
  return `${formatNumber(ms, 0)} ms`;
}

/** Bytes as KiB or MiB (`401 KiB`, `1.57 MiB`). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${formatNumber(bytes / 1024, 0)} KiB`;
  return `${formatNumber(bytes / (1024 * 1024), 2)} MiB`;
}

/** A share as a percentage (`12.3%`). */
export const formatShare = (share: number): string => `${formatNumber(share * 100, 1)}%`;

/** A ratio (`1.04×`). */
export const formatRatio = (ratio: number, digits = 2): string => `${formatNumber(ratio, digits)}×`;
