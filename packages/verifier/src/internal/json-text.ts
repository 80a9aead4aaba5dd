/**
 * The first member name that appears twice in one object of `text`, or null. `text` must be JSON
 * that JSON.parse accepted. RFC 8785 §3.1 signs I-JSON only, where names are unique (RFC 7493 §2.3):
 * JSON.parse keeps the last of two equal names, another reader the first, so a document with a
 * repeated name can show one reader content other than what was verified. Names are compared after
 * unescaping (`"a"` and `"\u0061"` are the same name).
 */
export function repeatedMemberName(text: string): string | null {
  // One entry per open container: the names seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectName = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const names = open.at(-1);
      if (expectName && names instanceof Set) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (names.has(name)) return name;
        names.add(name);
        expectName = false;
      }
      i = end + 1;
      continue;
    }
    if (c === '{') {
      open.push(new Set());
      expectName = true;
    } else if (c === '[') {
      open.push(null);
    } else if (c === '}' || c === ']') {
      open.pop();
    } else if (c === ',') {
      expectName = open.at(-1) instanceof Set;
    }
    i++;
  }
  return null;
}
