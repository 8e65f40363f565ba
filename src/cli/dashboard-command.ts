import { Command, InvalidArgumentError } from 'commander';
import { loadCliConfig } from './cli-config.js';

interface DashboardFlags {
  port?: number;
  host?: string;
}

const port = (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return n;
};

/**
 * `dashboard`: serves the dashboard alone (the `worker` serves it too). With `REDIS_URL` its
 * actions queue jobs for the workers; without it the page is read-only. The first stdout line is
 * one JSON object `{"url":...}`; it serves until SIGINT/SIGTERM.
 */
export function dashboardCommand(): Command {
  return new Command('dashboard')
    .description(
      'serve the sync dashboard and bull-board alone (default 127.0.0.1:3000; DASHBOARD_USER and DASHBOARD_PASSWORD required beyond loopback)',
    )
    .option(
      '--port <n>',
      'port to listen on (0 = any free port; default $DASHBOARD_PORT or dashboard.port)',
      port,
    )
    .option('--host <address>', 'address to bind (default $DASHBOARD_HOST or dashboard.host)')
    .action(async (flags: DashboardFlags, command: Command) => {
      const loaded = loadCliConfig(command);
      const { openStandaloneDashboard } = await import('../app/dashboard.js');
      const dashboard = await openStandaloneDashboard(loaded, {
        host: flags.host,
        port: flags.port,
      });
      try {
        process.stdout.write(`${JSON.stringify({ url: dashboard.url })}\n`);
        process.stderr.write(`Dashboard serving ${dashboard.url} (Ctrl-C stops it).\n`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
      } finally {
        await dashboard.close();
      }
    });
}
