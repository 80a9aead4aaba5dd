import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/**
 * A loopback HTTP proxy in front of the real service, for what only the wire can do to a client: an
 * answer that stalls after its headers, a request left unanswered, a stream whose line endings a
 * server of another make would write differently. Each request is forwarded unless `plan` says
 * otherwise; `transform` rewrites the text of a forwarded `text/event-stream` body and returns the
 * pieces to write (each written on its own, so a line ending can straddle two chunks).
 */
export type Plan =
  | undefined
  | 'hang' // never answered
  | 'stall-body' // the service's status and headers, then no body
  | { status: number; headers?: Record<string, string>; body?: string };

export interface ProxyLog {
  method: string;
  path: string;
  lastEventId: string | null;
}

export async function startProxy(
  t: TestContext,
  target: string,
  plan: (method: string, path: string, n: number) => Plan = () => undefined,
  transform?: (text: string) => string[],
): Promise<{ url: string; log: ProxyLog[] }> {
  const log: ProxyLog[] = [];
  const upstream = new URL(target);
  let n = 0;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const lastEventId = req.headers['last-event-id'];
    log.push({ method: req.method ?? '', path, lastEventId: typeof lastEventId === 'string' ? lastEventId : null });
    const action = plan(req.method ?? '', path, n++);
    if (action === 'hang') return;
    if (typeof action === 'object') {
      res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers }).end(action.body ?? '');
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (action === 'stall-body') {
        res.flushHeaders();
        answer.resume();
        return;
      }
      const stream = /^text\/event-stream/.test(String(answer.headers['content-type'])) && transform !== undefined;
      if (!stream) {
        answer.pipe(res);
        return;
      }
      answer.setEncoding('utf8');
      answer.on('data', (text: string) => {
        for (const piece of transform(text)) res.write(piece);
      });
      answer.on('end', () => res.end());
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log };
}
