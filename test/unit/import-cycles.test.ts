/**
 * No module of the project imports itself through others (STYLE.md: "a shared piece both need is
 * a module of its own"). A cycle makes the order modules are evaluated in matter, so a value can be
 * read before its module has run; dynamic `import()` counts too, since hiding a cycle behind one
 * only moves the same problem to run time. Type-only imports are erased and do not count.
 *
 * madge builds the graph with the TypeScript config and the package's `#core/*`-style imports.
 */
import { join } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../lib/constructs/news-alerts-function.ts';

const roots = ['functions', 'cli', 'lib', 'sandbox', 'scripts', 'bench', 'bin'];

describe('import graph', () => {
  it('has no cycles, and resolves every project import it meets', async () => {
    const graph = await madge(roots, {
      baseDir: projectRoot,
      fileExtensions: ['ts', 'mjs'],
      tsConfig: join(projectRoot, 'tsconfig.json'),
      detectiveOptions: { ts: { skipTypeImports: true }, es6: { skipTypeImports: true } },
    });
    const dependencies = graph.obj();
    // The graph is real: the handler's `#core/alert-run` and a dynamic import are both edges.
    expect(dependencies['functions/alert-run/handler.ts']).toContain('functions/core/alert-run.ts');
    expect(dependencies['cli/audiences.ts']).toContain('cli/workbench/repair.ts');
    // An import madge could not resolve would hide its edges: only npm packages may be skipped.
    const unresolved = graph.warnings().skipped.filter((name) => /^[.#/]/.test(name));
    expect(unresolved).toEqual([]);
    expect(graph.circular().map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});
