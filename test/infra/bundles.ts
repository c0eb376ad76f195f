/**
 * The function bundles of a synthesized stack, as Lambda would load them: where a function's
 * bundle is in the cloud assembly, the environment the stack gives it (tokens such as table names
 * replaced by plain strings, since they only resolve in CloudFormation), and an import of the
 * bundle in a fresh Node process.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Synthesized } from './synth.ts';

type FunctionResource = {
  Properties: {
    Description: string;
    Handler: string;
    Code: { S3Key: string };
    Environment: { Variables: Record<string, unknown> };
  };
};

/** A function's bundle directory, handler and environment, found by part of its description. */
export function bundleOf(
  synth: Synthesized,
  descriptionPart: string,
  resolve: (name: string) => string = (name) => `resolved-at-deploy-${name.toLowerCase()}`,
): { directory: string; handler: string; environment: Record<string, string> } {
  const functions = Object.values(synth.template.findResources('AWS::Lambda::Function')) as FunctionResource[];
  const fn = functions.find((candidate) => candidate.Properties.Description.includes(descriptionPart));
  if (fn === undefined) throw new Error(`no function described as ${descriptionPart}`);
  const directory = join(synth.assembly.directory, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
  const environment = Object.fromEntries(
    Object.entries(fn.Properties.Environment.Variables).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : resolve(name),
    ]),
  );
  return { directory, handler: fn.Properties.Handler, environment };
}

/** Imports the bundle in a fresh Node process (as Lambda's runtime does) and checks the handler export. */
export function importBundle(file: string, environment: Record<string, string>): SpawnSyncReturns<string> {
  const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); if (typeof m.handler !== 'function') { console.error('no handler export'); process.exit(3); }`;
  return spawnSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...environment,
    },
  });
}
