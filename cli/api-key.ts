/**
 * The news provider API key in the target's secret (read from stdin, never from argv).
 * (Placeholder: its owner fills in the commands.)
 */
import type { Command } from 'commander';

export function registerApiKey(_program: Command): void {}
