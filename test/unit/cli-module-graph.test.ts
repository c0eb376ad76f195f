/**
 * The CLI's own modules import each other without cycles (static or dynamic imports; `import type`
 * is erased and does not count): a cycle makes load order matter and defeats lazy chunks. The
 * target (cli/target.ts) and the deployed stack (cli/stack-target.ts) used to import each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cliDir = fileURLToPath(new URL('../../cli/', import.meta.url));

/** cli module → the cli modules it imports at run time. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(cliDir).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(join(cliDir, file), 'utf8');
    const targets = new Set<string>();
    // `import {...} from './x.ts'`, `export {...} from './x.ts'` (not `import type`/`export type`) and `import('./x.ts')`.
    for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'\.\/([\w-]+\.ts)'/gms)) {
      if (match[1]) targets.add(match[1]);
    }
    for (const match of source.matchAll(/import\(\s*'\.\/([\w-]+\.ts)'\s*\)/g)) if (match[1]) targets.add(match[1]);
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Every cycle through `start`, as a path of module names. */
function cyclesThrough(graph: Map<string, string[]>, start: string): string[][] {
  const cycles: string[][] = [];
  const walk = (module: string, path: string[], seen: Set<string>) => {
    for (const next of graph.get(module) ?? []) {
      if (next === start) cycles.push([...path, next]);
      else if (!seen.has(next)) {
        seen.add(next);
        walk(next, [...path, next], seen);
      }
    }
  };
  walk(start, [start], new Set([start]));
  return cycles;
}

describe('cli module graph', () => {
  it('has no import cycle through the program, the manifest, the targets or the errors', () => {
    const graph = importGraph();
    expect(graph.get('target.ts')).toContain('stack-target.ts');
    for (const module of ['program.ts', 'commands.ts', 'target.ts', 'stack-target.ts', 'context.ts', 'errors.ts']) {
      expect(cyclesThrough(graph, module), module).toEqual([]);
    }
  });
});
