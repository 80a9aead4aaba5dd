const DAY_MS = 86_400_000;

function secondsOfDay(hms: string): number {
  const [h, m, s] = hms.split(':').map(Number);
  return ((h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0)) * 1000;
}

export type SessionWindow =
  /** Inside the window that opened at `opened` (epoch ms); it closes at `closes`. */
  | { readonly open: true; readonly opened: number; readonly closes: number }
  /** Outside any window; the next opens at `opens`. */
  | { readonly open: false; readonly opens: number };

/**
 * Where `now` falls in a daily session window given as UTC `HH:MM:SS` times. An `end` before `start`
 * spans midnight (22:00:00 to 06:00:00). Without a window (both null) the session never closes; its
 * `opened` is then 0, so its sequence numbers never start again. Like QuickFIX, each window is a FIX
 * session of its own: sequence numbers start again at 1 when the next one opens.
 */
export function sessionWindow(now: number, start: string | null, end: string | null): SessionWindow {
  if (start === null || end === null) return { open: true, opened: 0, closes: Number.POSITIVE_INFINITY };
  const startMs = secondsOfDay(start);
  const length = (secondsOfDay(end) - startMs + DAY_MS) % DAY_MS;
  const dayStart = now - (now % DAY_MS);
  // The latest opening at or before now: today's, or yesterday's for a window spanning midnight.
  const opened = dayStart + startMs <= now ? dayStart + startMs : dayStart + startMs - DAY_MS;
  if (now < opened + length) return { open: true, opened, closes: opened + length };
  return { open: false, opens: opened + DAY_MS };
}
