// After `tsc -b` on install: the compiled command-line entry points become executable (the compiler
// writes plain files), and the verifier's bin is linked into node_modules/.bin (npm links workspace
// bins at install time, before they are built, and skips a missing target).
import { chmodSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

for (const file of ['dist/src/cli/cauri.cjs', 'dist/src/cli/main.js', 'packages/verifier/dist/cli.js']) {
  if (existsSync(file)) chmodSync(file, 0o755);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['rebuild', '@cauri/verifier', '--ignore-scripts', '--silent'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
