import type { Command } from 'commander';
import { EVENT_TYPES } from '../../events/event.types.js';
import { IntegratorApi } from '../integrator/api.js';
import { credentialsPath, listenSecret, normaliseApiUrl, readStored, resolveCredentials, writeStored } from '../integrator/credentials.js';
import { listen } from '../integrator/listen.js';
import { CliError, printJson, printTable } from '../output.js';

/**
 * The integrator's commands: they talk to a remote service over HTTP with client credentials
 * (`cauri login`, or CAURI_API_URL, CAURI_CLIENT_ID, CAURI_CLIENT_SECRET), unlike the operator
 * commands, which open the deployment's database.
 */

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  disabled: boolean;
}
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
  if (!(EVENT_TYPES as readonly string[]).includes(value)) throw new CliError(`unknown event type "${value}"; types are: ${EVENT_TYPES.join(', ')}`);
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
  throw new CliError(`--forward-to must be an absolute http(s) URL, such as http://localhost:3000/webhooks (got "${value}")`);
}

function positiveInt(name: string, value: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError(`${name} must be an integer from 1 to ${max} (got "${value}")`);
  return n;
}

async function clientEndpoints(client: IntegratorApi): Promise<Endpoint[]> {
  // At most 16 endpoints per client: one page holds them all.
  return (await client.json<{ data: Endpoint[] }>('GET', '/v1/webhooks/endpoints?limit=200')).data;
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
      const path = writeStored({ ...readStored(), api_url: credentials.apiUrl, client_id: credentials.clientId, client_secret: credentials.clientSecret });
      process.stdout.write(`Logged in to ${credentials.apiUrl} as ${credentials.clientId}${options.verify ? '' : ' (not verified)'}; credentials stored in ${path}\n`);
    });

  program
    .command('trigger <event-type>')
    .description('Send a sample event of this type (stored like any other) to one endpoint, or to each enabled endpoint of the client')
    .option('--endpoint <id>', 'the endpoint (we_...); default every enabled endpoint')
    .option('--livemode', 'mark the sample livemode: true (default: the deployment\'s mode)')
    .option('--json', 'print the events and deliveries as JSON')
    .action(async (type: string, options: { endpoint?: string; livemode?: boolean; json?: boolean }) => {
      const kind = eventType(type);
      const client = api();
      let targets: string[];
      if (options.endpoint !== undefined) targets = [options.endpoint];
      else {
        const endpoints = await clientEndpoints(client);
        targets = endpoints.filter((e) => !e.disabled).map((e) => e.id);
        if (targets.length === 0) {
          throw new CliError(
            endpoints.length === 0
              ? 'this client has no webhook endpoint: register one (POST /v1/webhooks/endpoints), or run cauri listen to receive events locally'
              : `every endpoint of this client is disabled (${endpoints.map((e) => e.id).join(', ')}); enable one or pass --endpoint`,
          );
        }
      }
      const sent: { event: Envelope; delivery: Delivery }[] = [];
      for (const id of targets) {
        sent.push(await client.json('POST', `/v1/webhooks/endpoints/${encodeURIComponent(id)}/test`, { type: kind, ...(options.livemode === true ? { livemode: true } : {}) }));
      }
      if (options.json === true) printJson(sent);
      else for (const s of sent) process.stdout.write(`${s.event.type} ${s.event.id} -> ${s.delivery.endpoint_id} (delivery ${s.delivery.id}, ${s.delivery.status})\n`);
    });

  program
    .command('listen')
    .description('Follow the client\'s events (GET /v1/events/stream) and forward each to a local URL, signed like a webhook delivery')
    .requiredOption('--forward-to <url>', 'local receiver, such as http://localhost:3000/webhooks')
    .option('--events <types>', 'comma-separated event types to forward (default: all)')
    .option('--after <event_id>', 'first replay the stored events after this id')
    .action(async (options: { forwardTo: string; events?: string; after?: string }) => {
      const forwardTo = forwardUrl(options.forwardTo);
      const types = options.events === undefined ? null : new Set(options.events.split(',').map((s) => s.trim()).filter((s) => s !== '').map(eventType));
      const client = api();
      const secret = listenSecret();
      process.stdout.write(
        `Ready: forwarding ${types === null ? 'all events' : [...types].join(', ')} from ${client.baseUrl} to ${forwardTo}\n` +
          `Your webhook signing secret is ${secret} (kept in ${credentialsPath()}; configure your receiver with it once)\n`,
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
          after: options.after ?? null,
          signal: controller.signal,
          out: (line) => process.stdout.write(`${line}\n`),
          err: (line) => process.stderr.write(`${line}\n`),
        });
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });

  const events = program.command('events').description('The client\'s stored events, on the remote service');

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
      const result = await api().json<{ event_id: string; deliveries: Delivery[] }>('POST', `/v1/events/${encodeURIComponent(eventId)}/resend`, body);
      if (options.json === true) printJson(result);
      else for (const d of result.deliveries) process.stdout.write(`${result.event_id} -> ${d.endpoint_id} (delivery ${d.id}, ${d.status})\n`);
    });
}
