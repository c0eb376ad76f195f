/**
 * Runs the news API simulator in a process of its own for the end-to-end benchmarks, so the
 * simulator's work (slicing pages, JSON, TLS) does not share an event loop or a heap with the run
 * being measured, as a real provider would not. The parent drives it over IPC (see
 * `startSimulatorProcess` in local-run.ts): one `start` message with the options, then `requests`
 * (the recorded API requests) and `stop`. Its one API key sees every outlet, so every seeded
 * article is in the run's window.
 */
import { randomBytes } from 'node:crypto';
import { type SimRequestRecord, startNewsSimulator } from '#sandbox/news-simulator';
import { ZoneCalendar } from '#sandbox/news-simulator-data';
import type { PemPair } from '#sandbox/tls';

/** What the parent asks for. */
export type SimulatorHostRequest =
  | {
      readonly type: 'start';
      readonly ca: PemPair;
      readonly seed: number;
      readonly days: number;
      readonly perDay: number;
      /** A pinned clock (epoch ms); the real clock when absent. */
      readonly now?: number;
      readonly timeZone: string;
    }
  | { readonly type: 'requests' }
  | { readonly type: 'stop' };

/** A recorded API request without its body. */
export type HostedRequestRecord = Omit<SimRequestRecord, 'body'> & {
  readonly publishedAtStart?: string;
  readonly publishedAtEnd?: string;
};

/** What the host answers. */
export type SimulatorHostReply =
  | {
      readonly type: 'ready';
      readonly url: string;
      readonly liveKey: string;
      readonly timeZone: string;
      /** Articles per provider date (the key sees every outlet). */
      readonly articlesByDate: Readonly<Record<string, number>>;
      /** Heap and RSS of the host once the articles are generated (MiB). */
      readonly rssMiB: number;
    }
  | { readonly type: 'requests'; readonly requests: readonly HostedRequestRecord[] }
  | { readonly type: 'error'; readonly message: string };

function reply(message: SimulatorHostReply): void {
  process.send?.(message);
}

function stripBody(record: SimRequestRecord): HostedRequestRecord {
  const { body, ...rest } = record;
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  return {
    ...rest,
    ...(typeof fields.publishedAtStart === 'string' ? { publishedAtStart: fields.publishedAtStart } : {}),
    ...(typeof fields.publishedAtEnd === 'string' ? { publishedAtEnd: fields.publishedAtEnd } : {}),
  };
}

async function host(): Promise<void> {
  let simulator: Awaited<ReturnType<typeof startNewsSimulator>> | undefined;
  process.on('message', (raw: SimulatorHostRequest) => {
    void (async () => {
      try {
        if (raw.type === 'start') {
          const pinned = raw.now;
          simulator = await startNewsSimulator({
            ca: raw.ca,
            seed: raw.seed,
            timeZone: raw.timeZone,
            generate: { days: raw.days, perDay: raw.perDay, live: false },
            // One live key for every outlet: every generated article is in the run's window.
            keys: {
              [`bench-live-${randomBytes(16).toString('hex')}`]: { name: 'bench-live', kind: 'live', media: '*' },
            },
            ...(pinned === undefined ? {} : { now: () => pinned }),
          });
          const calendar = new ZoneCalendar(simulator.timeZone);
          const articlesByDate: Record<string, number> = {};
          for (const article of simulator.articles()) {
            const date = calendar.dateOf(article.publishedAt);
            articlesByDate[date] = (articlesByDate[date] ?? 0) + 1;
          }
          reply({
            type: 'ready',
            url: simulator.url,
            liveKey: simulator.liveKey,
            timeZone: simulator.timeZone,
            articlesByDate,
            rssMiB: process.memoryUsage().rss / 2 ** 20,
          });
        } else if (raw.type === 'requests') {
          reply({ type: 'requests', requests: (simulator?.requests ?? []).map(stripBody) });
        } else {
          await simulator?.stop();
          process.disconnect?.();
          process.exit(0);
        }
      } catch (error) {
        reply({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      }
    })();
  });
}

void host();
