/**
 * The text/event-stream format, as the HTML Living Standard's "Interpreting an event stream"
 * (§9.2.6) reads it, fed with decoded text as it arrives (a leading byte order mark is the
 * TextDecoder's to drop):
 *
 * - a line ends with CRLF, LF or CR, also when the CR and the LF arrive in separate chunks;
 * - a blank line dispatches: the last event id becomes the `id` in force (also when the event has no
 *   data, so a block of only `id:` moves the resume position), then an event is made only when at
 *   least one `data` line came; several `data` lines are joined with a line feed;
 * - `:` starts a comment; a field without `:` has the empty value; one space after `:` is dropped;
 * - `id` holding U+0000 is ignored; `retry` is taken only when it is all ASCII digits; unknown fields
 *   are ignored; the `id` persists from event to event until the stream sets another.
 *
 * A parser is made for each connection, starting from the last event id of the one before (as
 * browsers' EventSource does), so that a blank line before the first `id:` does not lose it.
 */
export interface SseMessage {
  /** The event type (`event:`), `message` when none was given. */
  type: string;
  data: string;
  /** The last event id in force when the event was dispatched ('' when the stream set none). */
  lastEventId: string;
}

export class SseParser {
  #line = '';
  /** A CR ended the last chunk: an LF that begins the next one belongs to it. */
  #afterCr = false;
  #data = '';
  #hasData = false;
  #type = '';
  #idBuffer = '';
  /** The last event id as of the last dispatch: the position to resume after ('' for none). */
  lastEventId = '';
  /** The reconnection time the stream asked for with `retry:`, in milliseconds; null until it does. */
  retryMs: number | null = null;
  /** Comment lines seen (the service's `: ping`). */
  comments = 0;

  constructor(lastEventId = '') {
    this.#idBuffer = lastEventId;
    this.lastEventId = lastEventId;
  }

  /** Feeds decoded text; returns the events it completes, in order. */
  push(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    let start = 0;
    if (this.#afterCr && text.length > 0) {
      this.#afterCr = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    const ends = /[\r\n]/g;
    ends.lastIndex = start;
    for (let match = ends.exec(text); match !== null; match = ends.exec(text)) {
      const line = this.#line + text.slice(start, match.index);
      this.#line = '';
      start = match.index + 1;
      if (match[0] === '\r') {
        if (start === text.length) this.#afterCr = true;
        else if (text.charCodeAt(start) === 10) start++;
      }
      ends.lastIndex = start;
      const message = this.#process(line);
      if (message !== null) out.push(message);
    }
    this.#line += text.slice(start);
    return out;
  }

  #process(line: string): SseMessage | null {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) {
      this.comments++;
      return null;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.#data = this.#hasData ? `${this.#data}\n${value}` : value;
      this.#hasData = true;
    } else if (field === 'event') this.#type = value;
    else if (field === 'id') {
      if (!value.includes('\0')) this.#idBuffer = value;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) this.retryMs = Number(value);
    return null;
  }

  #dispatch(): SseMessage | null {
    this.lastEventId = this.#idBuffer;
    const message = this.#hasData
      ? { type: this.#type === '' ? 'message' : this.#type, data: this.#data, lastEventId: this.lastEventId }
      : null;
    this.#data = '';
    this.#hasData = false;
    this.#type = '';
    return message;
  }
}
