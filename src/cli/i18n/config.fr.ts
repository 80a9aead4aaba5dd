/**
 * The configuration's refusals (ConfigError, shared with the service, whose logs stay English), in
 * French for the command line: each English text of src/config, src/keys and src/services as a
 * pattern, and its French. test/cli/i18n-config.test.ts provokes the refusals and fails on one left
 * in English.
 */
const WHY_ORIGIN: Readonly<Record<string, string>> = {
  'is not a URL': "n'est pas une URL",
  'is not http or https': "n'est ni http ni https",
  'has more than a scheme, a host and a port': "a plus qu'un schéma, un hôte et un port",
};

const FR_CONFIG_ERRORS: readonly (readonly [RegExp, string | ((...groups: string[]) => string)])[] = [
  [
    /^must be a postgres:\/\/ URL \(leave it unset for the embedded SQLite database\)$/,
    'doit être une URL postgres:// (ne la donnez pas pour la base SQLite intégrée)',
  ],
  [/^must be a redis:\/\/ or rediss:\/\/ URL$/, 'doit être une URL redis:// ou rediss://'],
  [/^is not a valid URL \(check its host and port\)$/, "n'est pas une URL valide (vérifiez son hôte et son port)"],
  [
    /^is required in production \(32 bytes, as 64 hex characters or base64\)$/,
    'est obligatoire en production (32 octets, en 64 caractères hexadécimaux ou en base64)',
  ],
  [/^is required when (\S+)$/, 'est obligatoire quand $1'],
  [/^is required in production with (\S+)$/, 'est obligatoire en production avec $1'],
  [/^must be 32 bytes as 64 hex characters$/, 'doit faire 32 octets, en 64 caractères hexadécimaux'],
  [
    /^must be 32 bytes, as 64 hex characters or base64 \(43 characters, and an optional =\)$/,
    'doit faire 32 octets, en 64 caractères hexadécimaux ou en base64 (43 caractères, et un = facultatif)',
  ],
  [/^must be a lowercase name such as (\S+)$/, 'doit être un nom en minuscules, par exemple $1'],
  [/^must be a lowercase name of letters, digits and hyphens$/, 'doit être un nom en minuscules fait de lettres, de chiffres et de tirets'],
  [/^must be a 0x-prefixed 20-byte address$/, 'doit être une adresse de 20 octets commençant par 0x'],
  [/^must not exceed (\S+) \((\d+)\)$/, 'ne doit pas dépasser $1 ($2)'],
  [
    /^must be \* or origins such as (\S+) separated by commas; "(.*)" (is not a URL|is not http or https|has more than a scheme, a host and a port)$/,
    (example, entry, why) =>
      `doit être * ou des origines séparées par des virgules, par exemple ${example} ; « ${entry} » ${WHY_ORIGIN[why] ?? why}`,
  ],
  [/^must be one of (.*) \(got "(.*)"\)$/, "doit être l'un de $1 (reçu « $2 »)"],
  [/^must be a whole number \(got "(.*)"\)$/, 'doit être un nombre entier (reçu « $1 »)'],
  [/^must be between (\d+) and (\d+) \(got (\d+)\)$/, 'doit être entre $1 et $2 (reçu $3)'],
  [/^must be true or false \(got "(.*)"\)$/, 'doit valoir true ou false (reçu « $1 »)'],
  [
    /^must be true, false, or proxy addresses or CIDR ranges separated by commas \(got "(.*)"\)$/,
    'doit valoir true, false, ou des adresses de proxy ou des plages CIDR séparées par des virgules (reçu « $1 »)',
  ],
  [
    /^must be an IP address or a host name, such as (.*) or (\S+) \(got "(.*)"\)$/,
    "doit être une adresse IP ou un nom d'hôte, par exemple $1 ou $2 (reçu « $3 »)",
  ],
  [/^must be an absolute URL \(got "(.*)"\)$/, 'doit être une URL absolue (reçu « $1 »)'],
  [/^must be an http or https URL$/, 'doit être une URL http ou https'],
  [
    /^is not a folder \(a file stands at that path or above it\): (.*)$/,
    "n'est pas un dossier (un fichier se trouve à ce chemin ou au-dessus) : $1",
  ],
  [/^is not a folder: (.*)$/, "n'est pas un dossier : $1"],
  [/^is not writable by this process: (.*)$/, "n'est pas accessible en écriture à ce processus : $1"],
  [/^cannot be created \((.*)\): (.*)$/, 'ne peut pas être créé ($1) : $2'],
  [
    /^does not open signing key (\S+) stored in this database: every process of a deployment must use the master key the database was created with$/,
    "n'ouvre pas la clé de signature $1 de cette base : chaque processus d'un déploiement doit utiliser la clé maîtresse avec laquelle la base a été créée",
  ],
  [/^cannot connect to (.*?): (.*) \((\w+)\)$/, 'impossible de se connecter à $1 : $2 ($3)'],
];

/** `PORT: must be a whole number (got "eighty")` in French; a text with no French entry stays as it is. */
export function frenchConfigError(variable: string, message: string): string {
  const prefix = `${variable}: `;
  const text = message.startsWith(prefix) ? message.slice(prefix.length) : message;
  for (const [pattern, french] of FR_CONFIG_ERRORS) {
    const match = pattern.exec(text);
    if (match === null) continue;
    const groups = match.slice(1).map((g) => g ?? '');
    const translated =
      typeof french === 'string' ? french.replace(/\$(\d)/g, (_, n: string) => groups[Number(n) - 1] ?? '') : french(...groups);
    return `${variable} : ${translated}`;
  }
  return message;
}
