import { connect, createServer, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { FixFramer, type FixFrame } from './fix-wire.js';

/** `to_gateway`: from the service to the gateway; `to_service`: the other way. */
export type Direction = 'to_gateway' | 'to_service';

/** What becomes of a message on its way: delivered, lost, or held until released (or lost with the connection). */
export type Fate = 'pass' | 'drop' | 'hold';

export interface ProxiedMessage extends FixFrame {
  readonly direction: Direction;
  /** What the rule decided for it. */
  readonly fate: Fate;
  /** The connection it travelled on (1 for the first). */
  readonly connection: number;
}

/**
 * The network between the service and a FIX gateway, under a test's control: a TCP relay on
 * 127.0.0.1 that cuts the byte streams into FIX messages and asks `rule` what to do with each. A
 * message held is in flight: it is delivered by `release()`, or lost when either side's connection
 * ends. The service's settings point at the proxy's port, and each connection the service opens is
 * relayed over a new connection to the gateway.
 */
export interface FixProxy {
  readonly port: number;
  /** Every message seen, with its fate, in the order seen. */
  readonly messages: ProxiedMessage[];
  /** Decides the fate of each message from now on (initially every message passes). */
  rule: (message: FixFrame, direction: Direction) => Fate;
  /** Delivers the messages held, in order. */
  release(): void;
  /** Messages held now. */
  held(): ProxiedMessage[];
  /** When each connection from the service was accepted (Date.now()), whether or not the gateway answered. */
  readonly accepted: number[];
}

export async function startFixProxy(t: TestContext, gatewayPort: number): Promise<FixProxy> {
  const messages: ProxiedMessage[] = [];
  const pairs = new Set<{ service: Socket; gateway: Socket; held: { message: ProxiedMessage; to: Socket }[] }>();
  let connections = 0;
  const accepted: number[] = [];

  const proxy: FixProxy = {
    port: 0,
    messages,
    accepted,
    rule: () => 'pass',
    release() {
      for (const pair of pairs) {
        for (const { message, to } of pair.held.splice(0)) to.write(message.raw);
      }
    },
    held: () => [...pairs].flatMap((pair) => pair.held.map((h) => h.message)),
  };

  const server = createServer((service) => {
    connections += 1;
    accepted.push(Date.now());
    const connection = connections;
    service.pause();
    const gateway = connect({ host: '127.0.0.1', port: gatewayPort });
    const pair = { service, gateway, held: [] as { message: ProxiedMessage; to: Socket }[] };
    pairs.add(pair);
    const end = () => {
      // What was in flight is lost with the connection.
      pair.held.length = 0;
      pairs.delete(pair);
      service.destroy();
      gateway.destroy();
    };
    for (const socket of [service, gateway]) {
      socket.setNoDelay(true);
      socket.on('error', end);
      socket.on('close', end);
    }
    const relay = (from: Socket, to: Socket, direction: Direction) => {
      const framer = new FixFramer();
      from.on('data', (chunk: Buffer) => {
        for (const frame of framer.push(chunk)) {
          const fate = proxy.rule(frame, direction);
          const message: ProxiedMessage = { ...frame, direction, fate, connection };
          messages.push(message);
          if (fate === 'pass') {
            // Behind what is held, nothing overtakes.
            if (pair.held.some((h) => h.to === to)) pair.held.push({ message, to });
            else to.write(frame.raw);
          } else if (fate === 'hold') {
            pair.held.push({ message, to });
          }
        }
      });
    };
    gateway.once('connect', () => {
      relay(service, gateway, 'to_gateway');
      relay(gateway, service, 'to_service');
      service.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const pair of pairs) {
      pair.service.destroy();
      pair.gateway.destroy();
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return Object.assign(proxy, { port: (server.address() as { port: number }).port });
}
