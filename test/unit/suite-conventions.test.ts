/**
 * Rules of the test suite itself, checked on the sources of every test file (parsed with the
 * TypeScript compiler, so comments and strings never count):
 *
 * - No test waits less than the config's timeout (vitest.config.ts, 180 s). Timeouts catch hangs,
 *   not slowness: a shorter one fails a correct test on a loaded machine. So no test, suite or
 *   hook sets a shorter one, and every `vi.waitFor`, `vi.waitUntil` and `expect.poll` (whose
 *   default is one second) names one at least that long.
 * - test/unit is the quick project (`npm run test:quick`): no moto server and no sandbox, so no
 *   file there reads the run's moto endpoint or starts a stack.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const configTimeoutMs = 180_000;

/** Functions whose numeric argument, or `timeout` option, is a test, suite or hook timeout. */
const testFunctions = new Set(['it', 'test', 'describe', 'suite', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach']);
/** Modifiers whose own arguments are data (a table of cases, a condition), not options. */
const dataModifiers = new Set(['each', 'for', 'skipIf', 'runIf']);
/** Waits that time out after a second unless told otherwise. */
const waits = new Set(['vi.waitFor', 'vi.waitUntil', 'expect.poll']);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '__golden__' ? [] : testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** A numeric expression's value (literals, `+ - * /`, parentheses), or undefined. */
function numberOf(node: ts.Expression, constants: ReadonlyMap<string, ts.Expression>): number | undefined {
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isParenthesizedExpression(node)) return numberOf(node.expression, constants);
  if (ts.isIdentifier(node)) {
    const value = constants.get(node.text);
    return value === undefined ? undefined : numberOf(value, constants);
  }
  if (ts.isBinaryExpression(node)) {
    const left = numberOf(node.left, constants);
    const right = numberOf(node.right, constants);
    if (left === undefined || right === undefined) return undefined;
    switch (node.operatorToken.kind) {
      case ts.SyntaxKind.PlusToken:
        return left + right;
      case ts.SyntaxKind.MinusToken:
        return left - right;
      case ts.SyntaxKind.AsteriskToken:
        return left * right;
      case ts.SyntaxKind.SlashToken:
        return left / right;
      default:
        return undefined;
    }
  }
  return undefined;
}

/** `a.b.c` of a callee, with calls in the chain left out (`it.each(x)` is `it.each`). */
function calleeName(node: ts.Expression): string | undefined {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) {
    const left = calleeName(node.expression);
    return left === undefined ? undefined : `${left}.${node.name.text}`;
  }
  if (ts.isCallExpression(node)) return calleeName(node.expression);
  return undefined;
}

/** The problems of one file: `path:line: what`. */
function timeoutProblems(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const constants = new Map<string, ts.Expression>();
  const problems: string[] = [];
  const where = (node: ts.Node) =>
    `${relative(projectRoot, path)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;

  /**
   * Checks a timeout given as `value` (a number, or options holding one of `keys`), reported at
   * `at`; false when `value` holds none.
   */
  const checkTimeout = (value: ts.Expression | undefined, what: string, at: ts.Node, keys: readonly string[]) => {
    let node = value;
    if (node !== undefined && ts.isIdentifier(node)) node = constants.get(node.text) ?? node;
    if (node === undefined) return false;
    if (ts.isObjectLiteralExpression(node)) {
      let found = false;
      for (const property of node.properties) {
        if (!ts.isPropertyAssignment(property) || !keys.includes(property.name.getText(source))) continue;
        found = true;
        checkValue(property.initializer, `${what} ${property.name.getText(source)}`, at);
      }
      return found;
    }
    const number = numberOf(node, constants);
    if (number === undefined) return false;
    checkValue(node, `${what} timeout`, at);
    return true;
  };
  const checkValue = (node: ts.Expression, what: string, at: ts.Node) => {
    const number = numberOf(node, constants);
    if (number === undefined) {
      problems.push(`${where(at)}: ${what} is not a number this check can read (${node.getText(source)})`);
    } else if (number < configTimeoutMs) {
      problems.push(
        `${where(at)}: ${what} of ${number} ms is below the config's ${configTimeoutMs} ms: leave it out (or raise it)`,
      );
    }
  };

  // Constants first: a test may use one declared further down.
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
      const list = node.parent;
      if (ts.isVariableDeclarationList(list) && list.flags & ts.NodeFlags.Const) {
        constants.set(node.name.text, node.initializer);
      }
    }
    ts.forEachChild(node, collect);
  };
  collect(source);

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const name = calleeName(node.expression) ?? '';
      const root = name.split('.')[0] ?? '';
      const modifier = ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : undefined;
      if (waits.has(name)) {
        if (!checkTimeout(node.arguments[1], name, node, ['timeout'])) {
          problems.push(
            `${where(node)}: ${name} without a timeout waits one second: give it { timeout: ${configTimeoutMs} } or more`,
          );
        }
      } else if (name === 'vi.setConfig') {
        checkTimeout(node.arguments[0], 'vi.setConfig', node, ['testTimeout', 'hookTimeout']);
      } else if (testFunctions.has(root) && !(modifier && dataModifiers.has(modifier))) {
        for (const argument of node.arguments) {
          if (ts.isFunctionLike(argument) || ts.isStringLiteralLike(argument)) continue;
          checkTimeout(argument, name, argument, ['timeout']);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return problems;
}

describe('timeouts in tests', () => {
  it(`no test, suite, hook or wait gives up sooner than the config's ${configTimeoutMs} ms`, () => {
    const files = testFiles(join(projectRoot, 'test'));
    expect(files.length).toBeGreaterThan(100);
    const problems = files.flatMap((path) => timeoutProblems(path, readFileSync(path, 'utf8')));
    expect(problems).toEqual([]);
  });

  it('finds every form a short timeout takes, and accepts the config or longer', () => {
    const problems = timeoutProblems(
      join(projectRoot, 'test', 'example.test.ts'),
      `
      const short = 60_000;
      const options = { timeout: 2 * 60_000 };
      it('a', async () => {}, 60_000);
      test.concurrent('b', { timeout: 1000 }, async () => {});
      describe('c', { timeout: short }, () => {});
      beforeAll(async () => {}, short);
      it('d', options, async () => {});
      it.each([[1, 2]])('e %i', async () => {}, 5_000);
      vi.setConfig({ testTimeout: 30_000 });
      await vi.waitFor(() => {});
      await vi.waitFor(() => {}, { interval: 10, timeout: 30_000 });
      await expect.poll(() => 1, 1000).toBe(1);
      // Fine: the config's, longer, data, and timeouts that are not the test's.
      it('ok', async () => {}, 240_000);
      it('ok', { timeout: 180_000 }, async () => {});
      it.each([[1, 5_000]])('ok %i', async () => {});
      await vi.waitFor(() => {}, { timeout: 180_000, interval: 50 });
      const client = harness({ readTimeoutMs: 100, timeout: 5 });
      `,
    );
    expect(problems.map((problem) => problem.replace(/^[^:]+:(\d+): (.*?) (of|is|without).*$/, '$1 $2'))).toEqual([
      '4 it timeout',
      '5 test.concurrent timeout',
      '6 describe timeout',
      '7 beforeAll timeout',
      '8 it timeout',
      '9 it.each timeout',
      '10 vi.setConfig testTimeout',
      '11 vi.waitFor',
      '12 vi.waitFor timeout',
      '13 expect.poll timeout',
    ]);
  });
});

describe('the quick project (test/unit)', () => {
  it('is npm run test:quick, and docs/development.md says what it runs', () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts['test:quick']).toBe('node scripts/bootstrap.mjs test:quick');
    expect(readFileSync(join(projectRoot, 'scripts', 'bootstrap.mjs'), 'utf8')).toContain(
      "'test:quick': ['vitest', 'run', '--project', 'quick'",
    );
    const guide = readFileSync(join(projectRoot, 'docs', 'development.md'), 'utf8');
    expect(guide).toContain('| `npm run test:quick`');
    expect(guide).toContain('**quick**, `test/unit`');
  });

  it('starts no emulator and no stack: nothing there reads the moto endpoint or starts a sandbox', () => {
    const needsAws = /\binject\(|\b(awsClients|startTestStack|startCliSandbox|startLocalStack|startMoto)\(/;
    const offenders = testFiles(join(projectRoot, 'test', 'unit'))
      .filter((path) => needsAws.test(readFileSync(path, 'utf8')))
      .map((path) => relative(projectRoot, path));
    expect(offenders, 'move these to test/integration or test/cli (the system project starts moto)').toEqual([]);
  });
});
