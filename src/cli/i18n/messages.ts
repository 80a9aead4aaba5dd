/**
 * The command line's messages, one key per message, in English and French; `{name}` stands for a
 * value. The French entry is typed by the English one, so a key missing in either fails the build,
 * and test/cli/i18n.test.ts checks the values. See docs/cli.md.
 */
const en = {
  'help.lang': 'language of messages and help: en or fr (default: LC_ALL, LC_MESSAGES or LANG, else en)',
  'help.help': 'display help for command',
  'help.helpCommand': 'display help for command',
  'help.version': 'print the version of cauri',
  'lang.invalid': '--lang must be en or fr (got "{value}")',
  'credentials.none': 'no credentials: run cauri login --api-url <url> --client-id <id> --client-secret <secret>, or set {missing}',
  'file.unreadable': 'cannot read {path}: {reason}',
  'credentials.invalid': '{path} is not valid: {reason}; run cauri login again',
  'credentials.url': 'the API URL must be an absolute http(s) URL (got "{value}")',
  'credentials.protocol': 'the API URL must be http or https (got "{value}")',
  'events.type': 'unknown event type "{value}"; types are: {types}',
  'listen.forwardTo': '--forward-to must be an absolute http(s) URL, such as http://localhost:3000/webhooks (got "{value}")',
  'listen.required': '--forward-to <url> is required (or --print-secret)',
  'listen.conflict': '--after and --from-now cannot be used together',
  'login.done': 'Logged in to {url} as {client}; credentials stored in {path}',
  'login.unverified': 'Logged in to {url} as {client} (not verified); credentials stored in {path}',
  'orders.integer': '{name} must be an integer from {min} to {max} (got "{value}")',
  'orders.status': 'unknown status "{value}"; statuses are: {statuses}',
  'orders.amend.nothing': 'give --qty, --limit-price-cents or both',
  'orders.cancel.sent': '{id} cancel sent to the partner ({pending}); its answer comes later as an event',
  'orders.amend.sent': '{id} amend sent to the partner ({pending}); its answer comes later as an event',
  'orders.cancel.refused': '{id} cancel refused by the partner ({reason}); the order is {status}',
  'orders.amend.refused': '{id} amend refused by the partner ({reason}); the order is {status}',
  'orders.cancel.done': '{id} cancelled ({reason})',
  'orders.amend.done': '{id} amended: qty {qty}, limit_price_cents {limit}; the order is {status}',
} as const;

export type MessageKey = keyof typeof en;

const fr: Readonly<Record<MessageKey, string>> = {
  'help.lang': "langue des messages et de l'aide : en ou fr (par défaut : LC_ALL, LC_MESSAGES ou LANG, sinon en)",
  'help.help': "afficher l'aide de la commande",
  'help.helpCommand': "afficher l'aide d'une commande",
  'help.version': 'afficher la version de cauri',
  'lang.invalid': '--lang doit valoir en ou fr (reçu « {value} »)',
  'credentials.none':
    'aucun identifiant : lancez cauri login --api-url <url> --client-id <id> --client-secret <secret>, ou définissez {missing}',
  'file.unreadable': 'impossible de lire {path} : {reason}',
  'credentials.invalid': "{path} n'est pas valide : {reason} ; relancez cauri login",
  'credentials.url': "l'URL de l'API doit être une URL http(s) absolue (reçu « {value} »)",
  'credentials.protocol': "l'URL de l'API doit être en http ou https (reçu « {value} »)",
  'events.type': "type d'événement inconnu « {value} » ; les types sont : {types}",
  'listen.forwardTo': '--forward-to doit être une URL http(s) absolue, par exemple http://localhost:3000/webhooks (reçu « {value} »)',
  'listen.required': '--forward-to <url> est obligatoire (ou --print-secret)',
  'listen.conflict': '--after et --from-now ne vont pas ensemble',
  'login.done': 'Connecté à {url} en tant que {client} ; identifiants enregistrés dans {path}',
  'login.unverified': 'Connecté à {url} en tant que {client} (non vérifié) ; identifiants enregistrés dans {path}',
  'orders.integer': '{name} doit être un entier de {min} à {max} (reçu « {value} »)',
  'orders.status': 'statut inconnu « {value} » ; les statuts sont : {statuses}',
  'orders.amend.nothing': 'donnez --qty, --limit-price-cents ou les deux',
  'orders.cancel.sent': '{id} : annulation envoyée au partenaire ({pending}) ; sa réponse viendra plus tard dans un événement',
  'orders.amend.sent': '{id} : modification envoyée au partenaire ({pending}) ; sa réponse viendra plus tard dans un événement',
  'orders.cancel.refused': "{id} : annulation refusée par le partenaire ({reason}) ; l'ordre est {status}",
  'orders.amend.refused': "{id} : modification refusée par le partenaire ({reason}) ; l'ordre est {status}",
  'orders.cancel.done': '{id} annulé ({reason})',
  'orders.amend.done': "{id} modifié : qty {qty}, limit_price_cents {limit} ; l'ordre est {status}",
};

export const MESSAGES: Readonly<Record<'en' | 'fr', Readonly<Record<MessageKey, string>>>> = { en, fr };
