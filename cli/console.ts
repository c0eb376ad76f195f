import type { Command } from 'commander';
export function registerConsole(program: Command): void {
  program.command('console').description('the ops console');
}
