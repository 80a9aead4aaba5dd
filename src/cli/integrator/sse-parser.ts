/**
 * An incremental Server-Sent Events parser (WHATWG HTML §9.2.6, "Interpreting an event stream"):
 * `id`, `event`, `data` (several data lines are joined with a line feed), `retry`, and comments.
 * Lines end with CRLF, LF or CR, also when a CR and its LF arrive in separate chunks, so a CR that
 * ends a chunk ends its line at once. A blank line dispatches: the last event id becomes the `id` in
 * force, even when no `data` came (a block of only `id:` moves the resume position), and a message
 * is made only when `data` came. A parser made for a new connection starts from the previous one's
 * last event id, as an EventSource does.
 */
export interface SseMessage {
  /** The last event id seen so far (it persists across messages, as in EventSource). */
  id: string | null;
  event: string;
  data: string;
}

export class SseParser {
  #buffer = '';
  /** A CR ended the last chunk: an LF that begins the next one belongs to it. */
  #afterCr = false;
  #lastId: string | null;
  /** The last event id as of the last dispatch: where to resume after (null: none set). */
  lastEventId: string | null;
  #event = '';
  #data: string[] = [];
  #hasData = false;
  /** The server's `retry:` advice, in milliseconds, if it sent one. */
  retryMs: number | null = null;
  /** Comment lines seen (`: ping`), to tell that the connection is alive. */
  comments = 0;

  constructor(lastEventId: string | null = null) {
    this.#lastId = lastEventId;
    this.lastEventId = lastEventId;
  }

  /** Feeds decoded text; returns the messages completed by it. */
  push(text: string): SseMessage[] {
    if (this.#afterCr && text.length > 0) {
      this.#afterCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    this.#buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.#buffer);
      if (match === null) break;
      // A CR at the very end ends its line now; an LF at the start of the next chunk is its second half.
      if (match[0] === '\r' && match.index === this.#buffer.length - 1) this.#afterCr = true;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      const message = this.#line(line);
      if (message !== null) out.push(message);
    }
    return out;
  }

  #line(line: string): SseMessage | null {
    if (line === '') {
      this.lastEventId = this.#lastId;
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
