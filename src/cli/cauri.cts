#!/usr/bin/env node
/**
 * The `cauri` command's entry point. It is CommonJS, loaded synchronously, so that it runs before
 * anything starts libuv's thread pool: an ES module entry is read through the pool itself, which then
 * has its default size whatever the program sets later.
 *
 * The service signs every access token and attestation on that pool (Ed25519), so the pool does CPU
 * work, and more threads than cores only add wake-ups and context switches. Measured on 2 cores: the
 * default 4 threads gave 9,600 token exchanges per second, 2 threads 11,100. The pool gets one thread
 * per core, at least 2 so that a slow DNS lookup (webhook deliveries resolve names there) never holds
 * the only thread. UV_THREADPOOL_SIZE, when set, is left as it is.
 */
import os = require('node:os');

if (process.env.UV_THREADPOOL_SIZE === undefined || process.env.UV_THREADPOOL_SIZE === '') {
  process.env.UV_THREADPOOL_SIZE = String(Math.max(2, os.availableParallelism()));
}

import('./main.js').catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
