// Loads the test files given, in order, into this one process (scripts/run-tests.mjs starts it with
// node:test's reporter): node:test queues their tests as they are declared and runs them one after
// another, so a group runs as its files would one by one, without loading the service's modules again
// for each.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
