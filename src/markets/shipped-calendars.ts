import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The calendars the repository ships, in calendars/ at its root (compiled, this module sits in
 * dist/src/markets/). One file per exchange, in the format `cauri calendars import` reads.
 */
export const SHIPPED_CALENDARS_DIR = fileURLToPath(new URL('../../../calendars/', import.meta.url));

export interface ShippedCalendarFile {
  file: string;
  content: unknown;
}

export function readShippedCalendars(dir = SHIPPED_CALENDARS_DIR): ShippedCalendarFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => ({ file, content: JSON.parse(readFileSync(`${dir}${file}`, 'utf8')) as unknown }));
}
