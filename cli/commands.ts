/**
 * The manifest of command groups: what `news-alerts --help` lists, and how to load each group.
 * A group's module (and the AWS SDK clients, zod, yaml and tables it imports) is loaded only when
 * the command line names it, so `--help`, `--version` and every command start in a fraction of
 * the time of loading them all. Nothing here imports a group module at the top: each `load` is a
 * dynamic `import()` (a lazy chunk in the bundled CLI).
 */
import type { Command } from 'commander';

/** Adds a group's commands to the program. */
export type RegisterGroup = (program: Command) => void;

/** One top-level command the user types (`rules`, `runs`...). */
export interface CommandGroup {
  /** The command's name. */
  readonly name: string;
  /** Other names it answers to (`backtest` for `preview`). */
  readonly aliases?: readonly string[];
  /** One line for the top-level `--help` (the same as the group's own description). */
  readonly summary: string;
  /**
   * Loads the module that registers this command. Groups sharing a module (`run` and `runs`) share
   * the same function: it is called, and its commands registered, once.
   */
  readonly load: () => Promise<RegisterGroup>;
}

const loadRun = () => import('./run.ts').then((module) => module.registerRun);

/** Every top-level command, in the order `--help` lists them. */
export const commandGroups: readonly CommandGroup[] = [
  {
    name: 'rules',
    summary:
      'list, show, export, create, update, put, validate, explain, history, restore, enable, disable and delete subscriber rules',
    load: () => import('./rules.ts').then((module) => module.registerRules),
  },
  {
    name: 'audiences',
    summary: 'list, show, export, create, update, put, validate, delete and repair audiences (who receives alerts)',
    load: () => import('./audiences.ts').then((module) => module.registerAudiences),
  },
  {
    name: 'subscriptions',
    summary: 'list, add, remove and confirm subscribers of an audience; show pending confirmations',
    load: () => import('./subscriptions.ts').then((module) => module.registerSubscriptions),
  },
  {
    name: 'email',
    summary: 'SES email subscribers: add (double opt-in), list, remove, migrate from SNS email, history',
    load: () => import('./email.ts').then((module) => module.registerEmail),
  },
  {
    name: 'preview',
    aliases: ['backtest'],
    summary: 'what audiences would have received over a past window (or with a proposed rules file); sends nothing',
    load: () => import('./preview.ts').then((module) => module.registerPreview),
  },
  {
    name: 'replay',
    summary:
      're-deliver a past window through the delivery ledger: only alerts never delivered go out (backfill after an outage)',
    load: () => import('./replay.ts').then((module) => module.registerReplay),
  },
  {
    name: 'spikes',
    summary: 'spike alerts: evaluate the detector on any series (NAB format), explain a rule, list rules',
    load: () => import('./spikes.ts').then((module) => module.registerSpikes),
  },
  {
    name: 'watermark',
    summary: 'show the watermark, its lag and the last runs; set or rewind it',
    load: () => import('./watermark.ts').then((module) => module.registerWatermark),
  },
  {
    name: 'lease',
    summary: 'the run lease: clear one whose holder died',
    load: () => import('./lease.ts').then((module) => module.registerLease),
  },
  {
    name: 'run',
    summary: 'run one alert cycle now and show its result (stack: invokes the alert function; --local: runs it here)',
    load: loadRun,
  },
  { name: 'runs', summary: 'the alert run history', load: loadRun },
  {
    name: 'deliveries',
    summary:
      'what the subscribers of each audience received (sandbox: rendered per channel; --sent: the ledger, stack too)',
    load: () => import('./deliveries.ts').then((module) => module.registerDeliveries),
  },
  {
    name: 'holds',
    summary: 'held alerts (quiet hours, digest, daily budget) per audience, with when each goes out',
    load: () => import('./holds.ts').then((module) => module.registerHolds),
  },
  {
    name: 'test-send',
    summary: 'send a marked test notification to every subscriber of an audience; report what each channel accepted',
    load: () => import('./test-send.ts').then((module) => module.registerTestSend),
  },
  {
    name: 'console',
    summary:
      'the ops console: a local web page (loopback, one-time token) for rules, audiences, runs, articles, deliveries',
    load: () => import('./console.ts').then((module) => module.registerConsole),
  },
  {
    name: 'articles',
    summary: 'recent articles of the provider: look one up, search them, the categories and media they carry',
    load: () => import('./articles.ts').then((module) => module.registerArticles),
  },
  {
    name: 'api-key',
    summary: "the news provider API key in the target's secret (read from stdin, never printed)",
    load: () => import('./api-key.ts').then((module) => module.registerApiKey),
  },
  {
    name: 'sandbox',
    summary: 'the local sandbox (moto server + news API simulator + example audiences and rules) for --local',
    load: () => import('./sandbox.ts').then((module) => module.registerSandbox),
  },
];

/** The group a command name (or alias) belongs to. */
export function groupNamed(name: string): CommandGroup | undefined {
  return commandGroups.find((group) => group.name === name || group.aliases?.includes(name));
}
