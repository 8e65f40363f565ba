import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HttpsProxy {
  /** `https://127.0.0.1:<port>`: where the browser goes. */
  url: string;
  close(): Promise<void>;
}

/** A throw-away certificate: a P-256 key, valid one day, for the names the browser uses. */
const SELF_SIGNED =
  '-x509 -nodes -days 1 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -subj /CN=localhost'.split(' ');
const SAN = 'subjectAltName=DNS:localhost,IP:127.0.0.1';

/** Headers that describe one connection, not the message: never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

/**
 * A TLS-terminating reverse proxy on 127.0.0.1, as docs/dashboard.md sets nginx up: HTTPS with a
 * self-signed certificate (made now by `openssl`, for `127.0.0.1` and `localhost`), plain HTTP to
 * `target`, with `Host` the target's own (nginx's default) and the browser's view in
 * `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-For`.
 */
export async function startHttpsProxy(target: string): Promise<HttpsProxy> {
  const upstream = new URL(target);
  const dir = mkdtempSync(join(tmpdir(), 'rs-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', ...SELF_SIGNED, '-addext', SAN, '-keyout', keyFile, '-out', certFile], {
    stdio: 'ignore',
  });
  const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress]
      .filter(Boolean)
      .join(', ');
    const outgoing = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: {
          ...headers,
          host: upstream.host,
          'x-forwarded-proto': 'https',
          'x-forwarded-host': req.headers.host ?? '',
          'x-forwarded-for': forwardedFor,
        },
      },
      (answer) => {
        const back: IncomingHttpHeaders = { ...answer.headers };
        for (const name of HOP_BY_HOP) delete back[name];
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
      },
    );
    outgoing.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
