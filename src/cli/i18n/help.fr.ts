/**
 * The command line's help in French, by the path of the command (`orders list`), of its option
 * (`orders list --status`) or argument (`orders get <id>`); the program itself is ``. The English
 * help is in the commands' definitions; test/cli/i18n.test.ts fails when a command, option or
 * argument has no French entry here, or an entry names none.
 */
export const FR_HELP: Readonly<Record<string, string>> = {
  '': "Routage d'ordres vers les SGI et attestations KYC portables",
  ' --version': 'afficher la version de cauri',
  ' --lang': "langue des messages et de l'aide : en ou fr (par défaut : LC_ALL, LC_MESSAGES ou LANG, sinon en)",
  serve: "Lancer le service : --role api (l'API HTTP), worker (les tâches de fond, sans HTTP) ou all (les deux ; par défaut)",
  'serve --role': 'ce que ce processus exécute : api, worker, all (par défaut all, ou api quand CAURI_WORKERS=none)',
  worker: 'Comme `cauri serve --role worker` : seulement les tâches de fond, sans HTTP',
  migrate:
    'Appliquer les migrations de base de données en attente, les calendriers de bourse et barèmes de frais livrés (le service les applique aussi au démarrage)',
  'migrate --json': 'afficher le résultat en JSON',
  partners: "Gérer l'annuaire des SGI partenaires",
  'partners import': 'Insérer ou mettre à jour des SGI partenaires depuis un tableau JSON ; tout ou rien sauf avec --allow-partial',
  'partners import --allow-partial': "écrire les lignes valides même quand d'autres sont refusées",
  'partners import --json': 'afficher le rapport en JSON',
  'partners credentials': "Enregistrer le Username (553) et le Password (554) de logon d'un partenaire FIX, scellés avec la clé maîtresse",
  'partners credentials --username': 'Username (553) que la SGI a donné à ce service',
  'partners credentials --password-stdin': "lire le Password (554) sur l'entrée standard (une ligne)",
  'partners tls':
    "Enregistrer le certificat client TLS et la clé d'un partenaire FIX, et les autorités du certificat de sa passerelle, scellés avec la clé maîtresse",
  'partners tls --cert': 'certificat client PEM (sa chaîne peut suivre), avec --key',
  'partners tls --key': "clé privée PEM du certificat client, non chiffrée ; - la lit sur l'entrée standard",
  'partners tls --ca': 'certificats PEM des autorités dont dépend le certificat de la passerelle, à la place des autorités publiques',
  'partners tls --clear': 'supprimer le matériel TLS enregistré : aucun certificat client, autorités publiques',
  'partners tls --json': 'afficher ce qui est enregistré (les certificats seulement, jamais la clé) en JSON',
  'partners sessions':
    'Afficher la session de chaque partenaire FIX : état, numéros de séquence, derniers messages, processus qui la tient',
  'partners sessions --json': 'afficher en JSON',
  'partners list': 'Lister tous les partenaires, approuvés ou non',
  'partners list --json': 'afficher en JSON',
  instruments: 'Gérer le catalogue des valeurs',
  'instruments import': 'Insérer ou mettre à jour des valeurs depuis un tableau JSON ; tout ou rien sauf avec --allow-partial',
  'instruments import --allow-partial': "écrire les lignes valides même quand d'autres sont refusées",
  'instruments import --json': 'afficher le rapport en JSON',
  'instruments list': 'Lister toutes les valeurs',
  'instruments list --json': 'afficher en JSON',
  fx: 'Gérer les cours de référence quotidiens qui comptent les montants en cedis en FCFA pour les plafonds mensuels',
  'fx import':
    'Insérer ou mettre à jour des cours de référence (date, devise, cours en FCFA par unité, source) depuis un tableau JSON ; tout ou rien sauf avec --allow-partial',
  'fx import --allow-partial': "écrire les lignes valides même quand d'autres sont refusées",
  'fx import --json': 'afficher le rapport en JSON',
  'fx list': "Lister les cours de référence à partir d'une date",
  'fx list --from': 'premier jour, AAAA-MM-JJ',
  'fx list --json': 'afficher en JSON',
  accounts: 'Numéros de compte des investisseurs auprès des SGI, tels que les clients les ont enregistrés',
  'accounts list': "Lister les comptes enregistrés d'un client, par sujet puis par partenaire",
  'accounts list --client': 'le client (cli_...)',
  'accounts list --subject': 'seulement ce sujet',
  'accounts list --partner': 'seulement ce partenaire (sgi_...)',
  'accounts list --json': 'afficher en JSON',
  calendars: 'Gérer les calendriers de négociation des bourses (jours fériés, séances réduites, horaires)',
  'calendars import':
    "Remplacer les années des calendriers de bourse que donne le fichier (une entrée ou un tableau JSON d'entrées) ; tout ou rien",
  'calendars import --json': 'afficher le rapport en JSON',
  'calendars list': "Les années que couvre le calendrier de chaque bourse, l'origine de chacune, et ses jours exceptionnels",
  'calendars list --json': 'afficher en JSON',
  'calendars show': "Les jours exceptionnels d'une bourse (jours fériés, autres horaires), dates provisoires signalées",
  'calendars show --year': 'seulement cette année',
  'calendars show --json': 'afficher en JSON',
  markets: 'Les bourses et leurs horloges de négociation',
  'markets clock': "La phase d'une bourse (ou de chacune) maintenant, si elle est ouverte, et sa prochaine ouverture et clôture",
  'markets clock --json': 'afficher en JSON (un objet pour une bourse, un tableau pour toutes)',
  fees: 'Gérer les barèmes de frais : frais et taxes des bourses (les commissions des partenaires viennent avec cauri partners import)',
  'fees import':
    "Écrire les versions de barème de bourse que donne le fichier (une entrée ou un tableau JSON d'entrées), chacune selon son effective_from ; tout ou rien",
  'fees import --json': 'afficher le rapport en JSON',
  'fees list': "Chaque version de barème enregistrée, des partenaires et des bourses, avec sa date d'effet et son origine",
  'fees list --scope': 'seulement les versions `partner` ou `exchange`',
  'fees list --owner': 'seulement les versions de cet identifiant de partenaire ou code de bourse',
  'fees list --json': 'afficher en JSON (chaque version avec son contenu)',
  clients: "Gérer les clients de l'API et leurs secrets",
  'clients create': 'Créer un client ; affiche son identifiant et son secret une seule fois (seule une empreinte à clé est enregistrée)',
  'clients create --name': 'nom affiché du client',
  'clients create --scopes':
    "portées qui peuvent lui être accordées, séparées par des espaces (par défaut : kyc:read kyc:write orders:read orders:write audit:read webhooks:manage ; operator:read de l'opérateur seulement si nommée)",
  'clients create --json': 'afficher { client_id, client_secret, scopes } en JSON',
  'clients rotate-secret':
    "Émettre un nouveau secret ; l'ancien fonctionne encore 24 heures (ou s'arrête aussitôt avec --expire-previous-now)",
  'clients rotate-secret --expire-previous-now': 'tous les anciens secrets cessent aussitôt de fonctionner (un secret qui a fuité)',
  'clients rotate-secret --json': 'afficher en JSON',
  'clients expire-previous-secret':
    "Terminer maintenant les 24 heures de chevauchement du dernier renouvellement : les anciens secrets cessent de fonctionner, l'actuel continue",
  'clients expire-previous-secret --json': 'afficher { client_id, secrets_expired } en JSON',
  'clients list': 'Lister les clients',
  'clients list --json': 'afficher en JSON',
  'clients disable': "Désactiver un client : ses secrets et jetons d'accès cessent aussitôt de fonctionner, sur chaque processus",
  'clients enable':
    'Réactiver un client désactivé : ses secrets fonctionnent à nouveau ; les jetons émis avant sa désactivation restent refusés',
  keys: "Gérer les clés de signature Ed25519 (attestations, listes de révocation, instantanés ; jetons d'accès)",
  'keys list': 'Lister les clés de signature et leurs fenêtres de validité',
  'keys list --purpose': 'attestation ou token',
  'keys list --json': 'afficher en JSON',
  'keys rotate': 'Fermer la fenêtre de la clé courante et ouvrir la suivante au même instant ; les clés passées restent publiées',
  'keys rotate --purpose': 'attestation ou token',
  'keys rotate --json': 'afficher en JSON',
  audit: 'Instantanés de Merkle quotidiens des ordres (docs/audit.md)',
  'audit snapshot': "Construire l'instantané d'un jour passé (et de tout jour manquant avant lui), puis l'ancrer",
  'audit snapshot --date': 'le jour UTC',
  'audit snapshot --wait': "continuer l'ancrage jusqu'à l'arrivée du reçu (par défaut : une étape ; la tâche du service termine)",
  'audit snapshot --json': 'afficher en JSON',
  'audit verify': "Recalculer un jour construit à partir des ordres et comparer à la racine enregistrée (n'écrit rien)",
  'audit verify --date': 'le jour UTC',
  'audit verify --json': 'afficher en JSON',
  login: "Enregistrer l'URL de l'API et les identifiants du client pour les commandes d'intégrateur (fichier en mode 0600)",
  'login --api-url': 'URL de base du service, par exemple https://api.example',
  'login --client-id': 'identifiant du client (cli_...)',
  'login --client-secret': 'secret du client (sk_test_... ou sk_live_...)',
  'login --no-verify': 'enregistrer sans vérifier les identifiants auprès du service',
  trigger:
    "Enregistrer un événement d'exemple de ce type : pour les points de réception abonnés du client et son flux d'événements (cauri listen), ou pour un seul point de réception",
  'trigger --endpoint': "livrer l'exemple à ce seul point de réception (we_...), abonné au type ou non",
  'trigger --livemode': "marquer l'exemple livemode: true (par défaut : le mode du déploiement)",
  'trigger --json': "afficher l'événement (et la livraison, avec --endpoint) en JSON",
  listen:
    'Suivre les événements du client (GET /v1/events/stream) et transmettre chacun à une URL locale, signé comme une livraison de webhook',
  'listen --forward-to': 'récepteur local, par exemple http://localhost:3000/webhooks',
  'listen --events': "types d'événements à transmettre, séparés par des virgules (par défaut : tous)",
  'listen --after': "commencer après cet identifiant d'événement (par défaut : là où le dernier listen de cette machine s'est arrêté)",
  'listen --from-now': "commencer par les événements à partir de maintenant, en oubliant où le dernier listen s'est arrêté",
  'listen --print-secret': 'afficher le secret de signature des événements transmis et quitter',
  events: 'Les événements enregistrés du client, sur le service distant',
  'events list': 'Lister les événements, du plus récent au plus ancien',
  'events list --type': "seulement ce type d'événement",
  'events list --limit': 'combien (de 1 à 200)',
  'events list --json': 'afficher les enveloppes en JSON',
  'events resend': 'Livrer à nouveau un événement enregistré : à un point de réception, ou à chaque point de réception abonné à son type',
  'events resend --endpoint': 'le point de réception (we_...), abonné au type ou non',
  'events resend --json': 'afficher les livraisons en JSON',
  orders: 'Les ordres du client, sur le service distant',
  'orders list': 'Lister les ordres, du plus récent au plus ancien',
  'orders list --status': 'seulement ce statut (created, routed, partially_filled, filled, failed, cancelled)',
  'orders list --instrument': 'seulement cette valeur, par exemple SNTS.BRVM',
  'orders list --limit': 'combien (de 1 à 200)',
  'orders list --json': 'afficher les ordres en JSON',
  'orders get': "Afficher un ordre tel qu'il est maintenant",
  'orders get --json': "afficher l'ordre en JSON",
  'orders cancel': "Demander au partenaire d'annuler ce qui reste d'un ordre ouvert",
  'orders cancel --json': "afficher l'ordre tel que le service l'a répondu, avec le statut HTTP",
  'orders amend': "Modifier la quantité ou le cours limite d'un ordre à cours limité ouvert",
  'orders amend --qty': 'la nouvelle quantité totale',
  'orders amend --limit-price-cents': 'le nouveau cours limite, en centimes de la devise de la valeur',
  'orders amend --json': "afficher l'ordre tel que le service l'a répondu, avec le statut HTTP",
  'orders fills': "Les exécutions de l'ordre, de la plus ancienne à la plus récente",
  'orders fills --json': 'afficher les exécutions en JSON',
  'orders contract-note':
    "L'avis d'opéré d'un ordre exécuté : un résumé, l'avis en JSON (--json), ou son PDF écrit dans un fichier (--pdf)",
  'orders contract-note --pdf': "écrire l'avis en PDF dans ce fichier",
  'orders contract-note --note-lang':
    'langue du PDF : fr ou en (par défaut, celle du partenaire : le français pour les partenaires de la BRVM et de la BVMAC)',
  'orders contract-note --json': "afficher l'avis en JSON",
  positions: "Positions des investisseurs et relevés d'avoirs, sur le service distant",
  'positions list': 'Lister les positions (par sujet, partenaire et valeur), toutes les pages',
  'positions list --subject': 'seulement celles de ce sujet',
  'positions list --partner': 'seulement celles tenues chez ce partenaire',
  'positions list --instrument': 'seulement cette valeur, par exemple SNTS.BRVM',
  'positions list --json': 'afficher les positions en JSON',
  'positions declare':
    "Déclarer un relevé des avoirs d'un sujet chez un partenaire, depuis un fichier JSON : { subject_id, rcpt_to, as_of, holdings: [{ instrument, qty, average_cost_cents }] }",
  'positions declare --json': "afficher le relevé tel que le service l'a répondu",
  'positions statements': 'Lister les relevés, du plus récent au plus ancien (les 200 premiers)',
  'positions statements --subject': 'seulement ceux de ce sujet',
  'positions statements --partner': 'seulement ceux de ce partenaire',
  'positions statements --json': 'afficher les relevés en JSON',
};

/** Commander's section titles. */
export const FR_HELP_TITLES: Readonly<Record<string, string>> = {
  'Usage:': 'Utilisation :',
  'Options:': 'Options :',
  'Commands:': 'Commandes :',
  'Arguments:': 'Arguments :',
  'Global Options:': 'Options globales :',
};

/**
 * The words commander adds after an option's or argument's description (`(default: "20")`), in
 * French; a quoted value is put in French quotes.
 */
export function frenchHelpExtras(full: string, description: string): string {
  if (!full.startsWith(description) || full === description) return full;
  const extras = full
    .slice(description.length)
    .replace(/\bdefault: /g, 'par défaut : ')
    .replace(/\bchoices: /g, 'choix : ')
    .replace(/\bpreset: /g, 'valeur implicite : ')
    .replace(/\benv: /g, "variable d'environnement : ")
    .replace(/"([^"]*)"/g, '« $1 »');
  return `${description}${extras}`;
}

/** Commander's own error messages, in French (its texts as of commander 14). */
export const FR_COMMANDER_ERRORS: readonly (readonly [RegExp, string | ((match: string, ...groups: string[]) => string)])[] = [
  [/^error: unknown option '(.*)'/m, "erreur : option inconnue '$1'"],
  [/^error: unknown command '(.*)'/m, "erreur : commande inconnue '$1'"],
  [/^error: missing required argument '(.*)'/m, "erreur : argument obligatoire manquant '$1'"],
  [/^error: option '(.*)' argument missing/m, "erreur : l'option '$1' attend une valeur"],
  [/^error: required option '(.*)' not specified/m, "erreur : l'option obligatoire '$1' manque"],
  [
    /^error: too many arguments(?: for '(.*)')?\. Expected (\d+) arguments? but got (\d+)\./m,
    (_: string, command: string | undefined, expected: string, got: string) =>
      `erreur : trop d'arguments${command === undefined ? '' : ` pour '${command}'`} (attendus : ${expected}, reçus : ${got}).`,
  ],
  [/\(Did you mean (.*)\?\)/, '(Vouliez-vous dire $1 ?)'],
];
