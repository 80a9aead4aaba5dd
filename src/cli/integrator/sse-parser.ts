/**
 * An incremental Server-Sent Events parser (WHATWG HTML §9.2.6, "Interpreting an event stream"),
 * enough for the service's stream: `id`, `event`, `data` (several data lines are joined with a
 * line feed), `retry`, and comments. Lines end with CRLF, LF or CR; a blank line dispatches.
 */
export interface SseMessage {
  /** The last event id seen so far (it persists across messages, as in EventSource). */
  id: string | null;
  event: string;
  data: string;
}

export class SseParser {
  #buffer = '';
  #lastId: string | null = null;
  #event = '';
  #data: string[] = [];
  #hasData = false;
  /** The server's `retry:` advice, in milliseconds, if it sent one. */
  retryMs: number | null = null;
  /** Comment lines seen (`: ping`), to tell that the connection is alive. */
  comments = 0;

  /** Feeds decoded text; returns the messages completed by it. */
  push(text: string): SseMessage[] {
    this.#buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.#buffer);
      if (match === null) break;
      // A CR at the very end may be the first half of a CRLF split across two chunks.
      if (match[0] === '\r' && match.index === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      const message = this.#line(line);
      if (message !== null) out.push(message);
    }
    return out;
  }

  #line(line: string): SseMessage | null {
    if (line === '') {
      if (!this.#hasData) {
        this.#event = '';
        return null;
      }
      const message = { id: this.#lastId, event: this.#event === '' ? 'message' : this.#event, data: this.#data.join('\n') };
      this.#event = '';
      this.#data = [];
      this.#hasData = false;
      return message;
    }
    if (line.startsWith(':')) {
      this.comments++;
      return null;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data.push(value);
        this.#hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.#lastId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        // Unknown fields are ignored.
        break;
    }
    return null;
  }
}
