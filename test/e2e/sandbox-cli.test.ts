import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';

describe('receivables-sync sandbox (the built CLI)', () => {
  it('when started, then its first stdout line is JSON with baseUrl, organizationId and a token that works', async () => {
    const sandbox = await startCli(['sandbox', '--port', '0', '--quota', '50']);
    try {
      const ready = JSON.parse(sandbox.firstLine);
      expect(ready).toMatchObject({
        baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        organizationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        accessToken: expect.any(String),
      });
      const response = await fetch(`${ready.baseUrl}/api/public/v1/organizations`, {
        headers: { authorization: `Bearer ${ready.accessToken}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe('"public-api";q=50;w=60');
      expect(response.headers.get('ratelimit')).toBe('"public-api";r=49;t=60');
      const body = (await response.json()) as { nodes: Array<{ id: string }> };
      expect(body.nodes.map((o) => o.id)).toEqual([ready.organizationId]);
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });

  it('when every command is asked for --help, then each explains itself and exits 0', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    const commands = [...top.stdout.matchAll(/^ {2}([a-z-]+)(?: \[options\]| <|\s)/gm)]
      .map((m) => m[1]!)
      .filter((c) => c !== 'help' && !c.startsWith('-'));
    expect(commands).toContain('sandbox');
    for (const command of commands) {
      const help = await runCli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(/^Usage: receivables-sync /);
    }
  });

  it('when an option is invalid, then it exits 1 with a message naming it', async () => {
    const result = await runCli(['sandbox', '--port', 'abc']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('port must be an integer');
  });
});
