import type { Command } from 'commander';
import { ALL_SCOPES, OPERATOR_SCOPES, SCOPES, isScope, type Scope } from '../../auth/scopes.js';
import { withDeployment } from '../context.js';
import { say, sayCount } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

function parseScopes(value: string | undefined): Scope[] {
  if (value === undefined) return [...SCOPES];
  const scopes = value
    .trim()
    .split(/\s+/)
    .filter((s) => s !== '');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0)
    throw new CliError({ key: 'clients.scopes.unknown', params: { scopes: unknown.join(', '), all: ALL_SCOPES.join(' ') } });
  if (scopes.length === 0) throw new CliError({ key: 'clients.scopes.empty' });
  return scopes as Scope[];
}

export function registerClients(program: Command): void {
  const clients = program.command('clients').description('Manage API clients and their secrets');

  clients
    .command('create')
    .description('Create a client; prints its id and secret once (only a keyed hash is stored)')
    .requiredOption('--name <name>', 'display name of the client')
    .option(
      '--scopes <scopes>',
      `space-separated scopes it may be granted (default: ${SCOPES.join(' ')}; the operator's ${OPERATOR_SCOPES.join(' ')} only when named)`,
    )
    .option('--json', 'print { client_id, client_secret, scopes } as JSON')
    .action(async (options: { name: string; scopes?: string; json?: boolean }) => {
      const name = options.name.trim();
      if (name.length === 0 || name.length > 200) throw new CliError({ key: 'clients.name.invalid', params: { value: options.name } });
      const scopes = parseScopes(options.scopes);
      const issued = await withDeployment(({ services }) => services.clients.create(name, scopes));
      if (options.json === true) printJson(issued);
      else
        process.stdout.write(
          `client_id:     ${issued.client_id}\nclient_secret: ${issued.client_secret}\nscopes:        ${issued.scopes.join(' ')}\n\n${say('clients.created.notice')}\n`,
        );
    });

  clients
    .command('rotate-secret <client_id>')
    .description('Issue a new secret; the previous one keeps working for 24 hours (or stops at once with --expire-previous-now)')
    .option('--expire-previous-now', 'every previous secret stops working at once (a secret that leaked)')
    .option('--json', 'print as JSON')
    .action(async (clientId: string, options: { expirePreviousNow?: boolean; json?: boolean }) => {
      const expiry = options.expirePreviousNow === true ? 'now' : 'in_24_hours';
      const issued = await withDeployment(({ services }) => services.clients.rotateSecret(clientId, expiry));
      if (issued === null) throw new CliError({ key: 'clients.none', params: { id: clientId } });
      if (options.json === true) printJson(issued);
      else {
        const previous =
          expiry === 'now' ? say('clients.rotated.now') : say('clients.rotated.later', { at: String(issued.previous_secret_expires_at) });
        process.stdout.write(`client_id:     ${issued.client_id}\nclient_secret: ${issued.client_secret}\n${previous}\n`);
      }
    });

  clients
    .command('expire-previous-secret <client_id>')
    .description('End the 24-hour overlap of the last rotation now: every previous secret stops working, the current one keeps working')
    .option('--json', 'print { client_id, secrets_expired } as JSON')
    .action(async (clientId: string, options: { json?: boolean }) => {
      const ended = await withDeployment(({ services }) => services.clients.expirePreviousSecrets(clientId));
      if (ended === null) throw new CliError({ key: 'clients.none', params: { id: clientId } });
      if (options.json === true) printJson({ client_id: clientId, secrets_expired: ended });
      else
        process.stdout.write(
          `${
            ended === 0
              ? say('clients.expired.none', { id: clientId })
              : sayCount({ one: 'clients.expired.one', other: 'clients.expired.other' }, ended, { id: clientId })
          }\n`,
        );
    });

  clients
    .command('list')
    .description('List clients')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withDeployment(({ services }) => services.clients.list());
      if (options.json === true) printJson(list);
      else printTable(list, ['id', 'name', 'status', 'scopes', 'created_at']);
    });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    clients
      .command(`${verb} <client_id>`)
      .description(
        disabled
          ? 'Disable a client: its secrets and access tokens stop working at once, on every process'
          : 'Enable a disabled client again: its secrets work again; access tokens issued before it was disabled stay refused',
      )
      .action(async (clientId: string) => {
        const done = await withDeployment(({ services }) => services.clients.setDisabled(clientId, disabled));
        if (!done) throw new CliError({ key: 'clients.none', params: { id: clientId } });
        process.stdout.write(`${say(disabled ? 'clients.disabled' : 'clients.enabled', { id: clientId })}\n`);
      });
  }
}
