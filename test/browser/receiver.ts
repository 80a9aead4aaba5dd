import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export interface Receiver {
  url: string;
  received: { headers: IncomingHttpHeaders; body: string }[];
  /** The status every request is answered with; may be changed at any time. */
  status: number;
}

/** A webhook receiver on a loopback port, closed when the test ends. */
export async function receiver(t: TestContext, status = 200): Promise<Receiver> {
  const r: Receiver = { url: '', received: [], status };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(r.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return r;
}
