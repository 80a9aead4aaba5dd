/** A fenced code block of a Markdown file (CommonMark backtick fences, not indented). */
export interface FencedBlock {
  /** The first word of the info string (`sh` in ```` ```sh no-test ````), '' when absent. */
  language: string;
  /** The other words of the info string (`no-test`). */
  attributes: string[];
  code: string;
  /** 1-based line of the opening fence, to name a block in failure messages. */
  line: number;
}

const SHELLS = new Set(['sh', 'bash', 'shell']);

/** Every backtick-fenced block, in document order. An unclosed fence runs to the end of the file. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})\s*([^`]*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const fence = open[1] as string;
    const [language = '', ...attributes] = (open[2] as string).trim().split(/\s+/).filter((w) => w !== '');
    const body: string[] = [];
    let j = i + 1;
    // A closing fence is at least as long as the opening one, with nothing after it but spaces.
    while (j < lines.length && !new RegExp(`^${fence}\`*\\s*$`).test(lines[j] as string)) body.push(lines[j++] as string);
    blocks.push({ language, attributes, code: body.join('\n'), line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The shell blocks meant to run: `sh` (or `bash`, `shell`) blocks not marked `no-test`. */
export function runnableShellBlocks(markdown: string): FencedBlock[] {
  return fencedBlocks(markdown).filter((b) => SHELLS.has(b.language) && !b.attributes.includes('no-test'));
}

/**
 * One bash script of the blocks, in order, as a reader pasting them into one terminal would run
 * them: variables and functions carry over, and the first failing command stops the script. Each
 * block is announced on standard error so that a failure names it.
 */
export function shellScript(blocks: readonly FencedBlock[], source: string): string {
  const parts = blocks.map((b) => `echo ${JSON.stringify(`--- ${source}:${b.line}`)} >&2\n${b.code}`);
  return ['set -euo pipefail', ...parts, ''].join('\n');
}
