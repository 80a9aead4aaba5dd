import { readFileSync } from 'node:fs';
import { CliError } from './output.js';

/** Line and column (from 1) of a character offset, so that a refusal points into the file. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

/**
 * The offset of the first character that makes `text` invalid JSON (RFC 8259), or null when it is
 * valid. JSON.parse's messages give an offset only for some errors, so the syntax is walked here.
 */
export function jsonErrorOffset(text: string): number | null {
  let at = 0;
  const fail = (): never => {
    throw at;
  };
  const match = (re: RegExp): boolean => {
    re.lastIndex = at;
    if (!re.test(text)) return false;
    at = re.lastIndex;
    return true;
  };
  const skip = () => match(WHITESPACE);
  const expect = (char: string) => (text[at] === char ? at++ : fail());
  const value = (): void => {
    skip();
    const c = text[at];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      at++;
      skip();
      if (text[at] === close) {
        at++;
        return;
      }
      for (;;) {
        if (c === '{') {
          skip();
          if (!match(STRING)) fail();
          skip();
          expect(':');
        }
        value();
        skip();
        if (text[at] === ',') at++;
        else return void expect(close);
      }
    }
    if (c === '"') return void (match(STRING) || fail());
    if (text.startsWith('true', at) || text.startsWith('null', at)) at += 4;
    else if (text.startsWith('false', at)) at += 5;
    else if (!match(NUMBER)) fail();
  };
  try {
    value();
    skip();
    return at === text.length ? null : at;
  } catch (offset) {
    // Anything but an offset (a stack overflow on absurd nesting) leaves the position unknown.
    return typeof offset === 'number' ? offset : null;
  }
}

/** Reads a JSON file for an import; a syntax error names its line and column. */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError({ key: 'file.unreadable', params: { path, reason: (error as Error).message } });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const offset = jsonErrorOffset(text);
    const position = offset === null ? null : lineAndColumn(text, offset);
    const reason = (error as Error).message.split('\n')[0] ?? '';
    throw new CliError(
      position === null
        ? { key: 'file.notJson', params: { path, reason } }
        : { key: 'file.notJsonAt', params: { path, reason, line: String(position.line), column: String(position.column) } },
    );
  }
}
