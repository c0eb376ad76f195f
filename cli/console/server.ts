/**
 * The console's HTTP server: Hono on Node's http server, bound to 127.0.0.1 on a port the system
 * picks (or `--port`), behind the guard of security.ts, with the pages of pages/. It serves until
 * closed; nothing is kept between starts (the token is new each time).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { OperationFailedError } from '../errors.ts';
import { script, stylesheet } from './assets.ts';
import type { ConsoleServices } from './context.ts';
import { render } from './context.ts';
import { articlePages } from './pages/articles.ts';
import { audiencePages } from './pages/audiences.ts';
import { deliveryPages } from './pages/deliveries.ts';
import { rulePages } from './pages/rules.ts';
import { runPages } from './pages/runs.ts';
import { guard } from './security.ts';
import { problem } from './views/layout.ts';

/** The loopback address the console binds (never a wildcard). */
export const consoleHost = '127.0.0.1';

/** The application: the guard, the assets, the pages. */
export function consoleApp(services: ConsoleServices, port: () => number): Hono {
  const app = new Hono();
  app.use('*', guard(services.keys, port));
  app.get('/assets/console.css', (c) => c.body(stylesheet, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/assets/console.js', (c) => c.body(script, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get('/', (c) => c.redirect('/rules', 303));
  rulePages(app, services);
  audiencePages(app, services);
  runPages(app, services);
  articlePages(app, services);
  deliveryPages(app, services);
  app.notFound((c) =>
    render(c, services, { title: 'Not found', section: 'rules' }, problem('There is no such page.'), 404),
  );
  app.onError((error, c) => {
    services.log.error('a console page failed', { path: new URL(c.req.url).pathname, error: error.message });
    return render(c, services, { title: 'Something failed', section: 'rules' }, problem(error.message), 500);
  });
  return app;
}

/** A running console. */
export interface RunningConsole {
  readonly port: number;
  /** The URL with the one-time token. */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the console on loopback; resolves once it listens. */
export function startConsole(services: ConsoleServices, port = 0): Promise<RunningConsole> {
  let bound = 0;
  const app = consoleApp(services, () => bound);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: consoleHost, port }, (info: AddressInfo) => {
      bound = info.port;
      resolve({
        port: info.port,
        url: `http://${consoleHost}:${info.port}/?token=${services.keys.token}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new OperationFailedError(
            `port ${port} on ${consoleHost} is in use (another console, or another server): give another --port, or leave it out for a free one`,
            { cause: error },
          ),
        );
      } else reject(error);
    });
  });
}
