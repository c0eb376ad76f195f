/**
 * Categories and media seen in recent articles.
 * (Placeholder: its owner fills in the commands.)
 */
import type { Command } from 'commander';

export function registerArticles(_program: Command): void {}
