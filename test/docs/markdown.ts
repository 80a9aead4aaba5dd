/** A fenced code block of a Markdown file (CommonMark backtick fences, not indented). */
export interface FencedBlock {
  /** The first word of the info string (`sh` in ```` ```sh production ````), '' when absent. */
  language: string;
  /** The other words of the info string (`production`). */
  attributes: string[];
  code: string;
  /** 1-based line of the opening fence, to name a block in failure messages. */
  line: number;
}

export const SHELLS = new Set(['sh', 'bash', 'shell']);

/**
 * The marks a shell block may carry in its info string, and why a block so marked is not run by the
 * docs run. Every other shell block of README.md and docs/ runs as written.
 */
export const NOT_RUN = {
  /** Needs a real deployment: a partner's gateway, its certificates, a production database, a chain, a registry. */
  production: 'needs a real deployment',
  /** Starts the service in the foreground: the docs run starts one itself, sandbox on SQLite, on loopback. */
  service: 'starts the service, which the docs run starts itself',
  /** Only sets where the service or a receiver listens (`BASE`, `HOOK_PORT`): the docs run sets them to its own. */
  env: 'sets addresses the docs run sets to its own',
  /** Runs for minutes (the whole test suite, a benchmark): run on its own, not by the docs run. */
  long: 'runs for minutes, on its own',
} as const;

export type NotRunMark = keyof typeof NOT_RUN;

export function isShell(block: FencedBlock): boolean {
  return SHELLS.has(block.language);
}

/** The mark that keeps a shell block out of the docs run, if it has one. */
export function notRunMark(block: FencedBlock): NotRunMark | undefined {
  return block.attributes.find((a): a is NotRunMark => Object.hasOwn(NOT_RUN, a));
}

/**
 * Every backtick-fenced block, in document order. A fence may be indented (a block inside a list
 * item); its body loses as many leading spaces as the opening fence has, as CommonMark strips them.
 * An unclosed fence runs to the end of the file.
 */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,})\s*([^`]*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const indent = (open[1] as string).length;
    const fence = open[2] as string;
    const [language = '', ...attributes] = (open[3] as string)
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '');
    const body: string[] = [];
    let j = i + 1;
    // A closing fence is at least as long as the opening one, with nothing after it but spaces.
    const close = new RegExp(`^ *${fence}\`*\\s*$`);
    for (; j < lines.length && !close.test(lines[j] as string); j++) {
      const line = lines[j] as string;
      body.push(line.slice(Math.min(indent, line.length - line.trimStart().length)));
    }
    blocks.push({ language, attributes, code: body.join('\n'), line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The shell blocks the docs run runs: `sh` (or `bash`, `shell`) blocks without a mark of {@link NOT_RUN}. */
export function runnableShellBlocks(markdown: string): FencedBlock[] {
  return fencedBlocks(markdown).filter((b) => isShell(b) && notRunMark(b) === undefined);
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
