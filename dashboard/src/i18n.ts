import { en, type MessageKey } from './i18n/en.js';
import { fr } from './i18n/fr.js';

/**
 * The dashboard's languages and its one translation function. Messages live in the catalogues of
 * ./i18n/ (one key per message, `{name}` for a value); plural forms are keys ending in `.one` and
 * `.other` (and French's `.many`), chosen by `Intl.PluralRules`. Numbers, amounts and dates are
 * formatted by `Intl` for the language's locale (format.ts). See docs/dashboard.md.
 */
export const LANGUAGES = ['en', 'fr'] as const;
export type Language = (typeof LANGUAGES)[number];
export type { MessageKey };

export const CATALOGUES: Readonly<Record<Language, Readonly<Record<MessageKey, string>>>> = { en, fr };

/** Where the user's explicit choice is remembered (the only thing the dashboard stores). */
const STORAGE_KEY = 'cauri.lang';

function stored(): Language | null {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return value === 'en' || value === 'fr' ? value : null;
  } catch {
    return null;
  }
}

/** The first of the browser's languages that the dashboard speaks, with its full tag for `Intl`. */
function fromBrowser(): { language: Language; locale: string } | null {
  for (const tag of navigator.languages ?? [navigator.language]) {
    const language = tag.toLowerCase().split('-')[0];
    if (language === 'en' || language === 'fr') return { language, locale: tag };
  }
  return null;
}

/** The locale of `Intl` when the browser names none of the language's regions. */
const DEFAULT_LOCALE: Record<Language, string> = { en: 'en-GB', fr: 'fr-FR' };

let language: Language = 'en';
let locale = DEFAULT_LOCALE.en;
let plurals = new Intl.PluralRules(locale);
const listeners: (() => void)[] = [];

function apply(next: Language): void {
  const browser = fromBrowser();
  language = next;
  locale = browser?.language === next ? browser.locale : DEFAULT_LOCALE[next];
  plurals = new Intl.PluralRules(locale);
  document.documentElement.lang = next;
}

apply(stored() ?? fromBrowser()?.language ?? 'en');

export const currentLanguage = (): Language => language;
/** The BCP 47 locale of numbers and dates, e.g. `fr-CI` for a browser in French (Côte d'Ivoire). */
export const currentLocale = (): string => locale;

/** Switches the language, remembers the choice for the next visits, and re-renders. */
export function setLanguage(next: Language): void {
  try {
    localStorage.setItem(STORAGE_KEY, next);
  } catch {
    // Storage refused (private mode): the choice lasts for this tab.
  }
  apply(next);
  for (const listener of listeners) listener();
}

export function onLanguageChange(listener: () => void): void {
  listeners.push(listener);
}

export type Params = Record<string, string | number>;

/** What a missing message shows, so that the browser tests find it: never an empty string. */
export const MISSING = (key: string): string => `\u27e6${key}\u27e7`;

function fill(text: string, params: Params): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === 'number' ? new Intl.NumberFormat(locale).format(value) : value;
  });
}

/** The message `key` in the current language, its `{name}` placeholders filled from `params`. */
export function t(key: MessageKey, params: Params = {}): string {
  const text = CATALOGUES[language][key] as string | undefined;
  return text === undefined ? MISSING(key) : fill(text, params);
}

/** A message chosen at run time (a status, an event type); `fallback` when the catalogue has none. */
export function tKnown(key: string, fallback: string, params: Params = {}): string {
  const text = (CATALOGUES[language] as Record<string, string>)[key];
  return text === undefined ? fallback : fill(text, params);
}

/** A message with plural forms: `<base>.one`, `<base>.other`, chosen for `count` by the locale's rules. */
export function tn(base: string, count: number, params: Params = {}): string {
  const catalogue = CATALOGUES[language] as Record<string, string>;
  const form = plurals.select(count);
  const text = catalogue[`${base}.${form}`] ?? catalogue[`${base}.other`];
  return text === undefined ? MISSING(base) : fill(text, { count, ...params });
}
