import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
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
    // asserts on time; these only have to be far above what a loaded machine needs.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Integration tests share one moto server; every test creates resources under its own prefix.
    pool: 'forks',
    reporters: ['default'],
  },
});
