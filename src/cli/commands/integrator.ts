import type { Command } from 'commander';
import { EVENT_TYPES } from '../../events/event.types.js';
import { IntegratorApi } from '../integrator/api.js';
import {
  credentialsPath,
  listenSecret,
  listenStatePath,
  normaliseApiUrl,
  readListenPosition,
  readStored,
  resolveCredentials,
  writeListenPosition,
  writeStored,
} from '../integrator/credentials.js';
import { listen } from '../integrator/listen.js';
import { say } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

/**
 * The integrator's commands: they talk to a remote service over HTTP with client credentials
 * (`cauri login`, or CAURI_API_URL, CAURI_CLIENT_ID, CAURI_CLIENT_SECRET), unlike the operator
 * commands, which open the deployment's database.
 */

interface Envelope {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  data: unknown;
}
interface Delivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  next_attempt_at: string | null;
}

function eventType(value: string): string {
  if (!(EVENT_TYPES as readonly string[]).includes(value))
    throw new CliError({ key: 'events.type', params: { value, types: EVENT_TYPES.join(', ') } });
  return value;
}

function api(): IntegratorApi {
  return new IntegratorApi(resolveCredentials());
}

function forwardUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
  } catch {
    // Reported below.
  }
  throw new CliError({ key: 'listen.forwardTo', params: { value } });
}

function positiveInt(name: string, value: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new CliError({ key: 'orders.integer', params: { name, min: '1', max: String(max), value } });
  return n;
}

export function registerIntegrator(program: Command): void {
  program
    .command('login')
    .description('Store the API URL and client credentials for the integrator commands (file mode 0600)')
    .requiredOption('--api-url <url>', 'base URL of the service, such as https://api.example')
    .requiredOption('--client-id <id>', 'client id (cli_...)')
    .requiredOption('--client-secret <secret>', 'client secret (sk_test_... or sk_live_...)')
    .option('--no-verify', 'store without checking the credentials against the service')
    .action(async (options: { apiUrl: string; clientId: string; clientSecret: string; verify: boolean }) => {
      const credentials = { apiUrl: normaliseApiUrl(options.apiUrl), clientId: options.clientId, clientSecret: options.clientSecret };
      if (options.verify) await new IntegratorApi(credentials).token();
      const path = writeStored({
        ...readStored(),
        api_url: credentials.apiUrl,
        client_id: credentials.clientId,
        client_secret: credentials.clientSecret,
      });
      process.stdout.write(
        `${say(options.verify ? 'login.done' : 'login.unverified', { url: credentials.apiUrl, client: credentials.clientId, path })}\n`,
      );
    });

  program
    .command('trigger <event-type>')
    .description(
      "Store a sample event of this type: for the client's subscribed endpoints and event stream (cauri listen), or for one endpoint only",
    )
    .option('--endpoint <id>', 'deliver the sample to this endpoint (we_...) only, subscribed to the type or not')
    .option('--livemode', "mark the sample livemode: true (default: the deployment's mode)")
    .option('--json', 'print the event (and the delivery, with --endpoint) as JSON')
    .action(async (type: string, options: { endpoint?: string; livemode?: boolean; json?: boolean }) => {
      const kind = eventType(type);
      const client = api();
      const body = { type: kind, ...(options.livemode === true ? { livemode: true } : {}) };
      if (options.endpoint !== undefined) {
        const sent = await client.json<{ event: Envelope; delivery: Delivery }>(
          'POST',
          `/v1/webhooks/endpoints/${encodeURIComponent(options.endpoint)}/test`,
          body,
        );
        if (options.json === true) printJson(sent);
        else {
          const { event, delivery } = sent;
          const params = { type: event.type, id: event.id, endpoint: delivery.endpoint_id, delivery: delivery.id, status: delivery.status };
          process.stdout.write(`${say('trigger.endpoint', params)}\n`);
        }
        return;
      }
      const sent = await client.json<{ event: Envelope }>('POST', '/v1/events/test', body);
      if (options.json === true) printJson(sent);
      else process.stdout.write(`${say('trigger.stored', { type: sent.event.type, id: sent.event.id })}\n`);
    });

  program
    .command('listen')
    .description("Follow the client's events (GET /v1/events/stream) and forward each to a local URL, signed like a webhook delivery")
    .option('--forward-to <url>', 'local receiver, such as http://localhost:3000/webhooks')
    .option('--events <types>', 'comma-separated event types to forward (default: all)')
    .option('--after <event_id>', 'start after this event id (default: where the last listen on this machine stopped)')
    .option('--from-now', 'start with the events from now on, forgetting where the last listen stopped')
    .option('--print-secret', 'print the signing secret of forwarded events and exit')
    .action(async (options: { forwardTo?: string; events?: string; after?: string; fromNow?: boolean; printSecret?: boolean }) => {
      const secret = listenSecret();
      if (options.printSecret === true) {
        process.stdout.write(`${secret}\n`);
        return;
      }
      if (options.forwardTo === undefined) throw new CliError({ key: 'listen.required' });
      if (options.after !== undefined && options.fromNow === true) throw new CliError({ key: 'listen.conflict' });
      const forwardTo = forwardUrl(options.forwardTo);
      const types =
        options.events === undefined
          ? null
          : new Set(
              options.events
                .split(',')
                .map((s) => s.trim())
                .filter((s) => s !== '')
                .map(eventType),
            );
      const credentials = resolveCredentials();
      const client = new IntegratorApi(credentials);
      const remembered = options.fromNow === true ? null : readListenPosition(client.baseUrl, credentials.clientId);
      const after = options.after ?? remembered;
      process.stdout.write(
        `${
          types === null
            ? say('listen.ready.all', { from: client.baseUrl, to: forwardTo })
            : say('listen.ready', { types: [...types].join(', '), from: client.baseUrl, to: forwardTo })
        }\n` +
          `${say('listen.secret', { secret, path: credentialsPath() })}\n` +
          (options.after === undefined && remembered !== null ? `${say('listen.resuming', { id: remembered })}\n` : ''),
      );
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        await listen(client, {
          forwardTo,
          types,
          secret,
          after: after ?? null,
          signal: controller.signal,
          received: (eventId) => {
            try {
              writeListenPosition(client.baseUrl, credentials.clientId, eventId);
            } catch (error) {
              const reason = (error as Error).message;
              process.stderr.write(`cauri: ${say('listen.position', { path: listenStatePath(), reason })}\n`);
            }
          },
          out: (line) => process.stdout.write(`${line}\n`),
          err: (line) => process.stderr.write(`${line}\n`),
        });
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });

  const events = program.command('events').description("The client's stored events, on the remote service");

  events
    .command('list')
    .description('List events, newest first')
    .option('--type <type>', 'only this event type')
    .option('--limit <n>', 'how many (1 to 200)', '20')
    .option('--json', 'print the envelopes as JSON')
    .action(async (options: { type?: string; limit: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: String(positiveInt('--limit', options.limit, 200)) });
      if (options.type !== undefined) query.set('type', eventType(options.type));
      const { data } = await api().json<{ data: Envelope[] }>('GET', `/v1/events?${query.toString()}`);
      if (options.json === true) printJson(data);
      else printTable(data, ['id', 'type', 'created_at', 'livemode']);
    });

  events
    .command('resend <event_id>')
    .description('Deliver a stored event again: to one endpoint, or to every endpoint subscribed to its type')
    .option('--endpoint <id>', 'the endpoint (we_...), subscribed to the type or not')
    .option('--json', 'print the deliveries as JSON')
    .action(async (eventId: string, options: { endpoint?: string; json?: boolean }) => {
      const body = options.endpoint === undefined ? {} : { endpoint_id: options.endpoint };
      const result = await api().json<{ event_id: string; deliveries: Delivery[] }>(
        'POST',
        `/v1/events/${encodeURIComponent(eventId)}/resend`,
        body,
      );
      if (options.json === true) printJson(result);
      else
        for (const d of result.deliveries)
          process.stdout.write(
            `${say('resend.delivery', { event: result.event_id, endpoint: d.endpoint_id, delivery: d.id, status: d.status })}\n`,
          );
    });
}
