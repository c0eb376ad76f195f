import { defineConfig } from 'vitest/config';

/** Settings of every test: the two projects below inherit them (`extends: true`). */
export default defineConfig({
  test: {
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_DEV: 'false',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
    // Timeouts catch hangs, not slowness: the CLI tests start real processes one after another, and
    // on a busy 2-core machine (load 5-8) a test that takes 10 s idle takes well over 30 s. No test
    // asserts on time; these only have to be far above what a loaded machine needs. No test or hook
    // may set a shorter one (test/unit/suite-conventions.test.ts checks).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Integration tests share one moto server; every test creates resources under its own prefix.
    pool: 'forks',
    // One test file per core. Vitest's default is one fewer (a single worker on a 2-core machine),
    // which leaves a core idle while a file waits for moto, the simulator or a CLI process.
    maxWorkers: '100%',
    reporters: ['default'],
    projects: [
      {
        // `npm run test:quick`: the pure core, no emulator and no built CLI (nothing to start). It
        // runs them without isolation; the set-up file resets global state after every file.
        extends: true,
        test: { name: 'quick', include: ['test/unit/**/*.test.ts'], setupFiles: ['test/support/quick-setup.ts'] },
      },
      {
        // The rest needs the run's moto server and the freshly built CLI (test/support/global-setup.ts).
        extends: true,
        test: {
          name: 'system',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**'],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
