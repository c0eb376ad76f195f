/**
 * Entry point of the `news-alerts` ops CLI (docs/ops-guide.md). The commands live in cli/; this
 * file only runs them and exits with their code. It is the source entry: `npm run build`
 * (scripts/build-cli.mjs) bundles it into dist/news-alerts.js, which the installed `news-alerts`
 * (bin/news-alerts.js) runs; tests run it from source with `node --import tsx bin/news-alerts.ts`.
 */
import { exitCodeAfterOutput, main } from '../cli/program.ts';

const code = await main(process.argv);
// Wait until everything written to stdout is flushed (a pipe may still hold a large JSON
// document), then exit: idle keep-alive sockets of the AWS SDK must not keep the process alive.
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
process.exit(exitCodeAfterOutput(code));
