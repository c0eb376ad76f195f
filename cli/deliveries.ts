/**
 * What subscribers of an audience received (sandbox audit queues), rendered per channel.
 * (Placeholder: its owner fills in the commands.)
 */
import type { Command } from 'commander';

export function registerDeliveries(_program: Command): void {}
