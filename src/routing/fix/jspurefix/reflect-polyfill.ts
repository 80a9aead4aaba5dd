import { createRequire } from 'node:module';

// jspurefix builds its objects with tsyringe, which needs the Reflect metadata API before jspurefix
// is loaded. The polyfill is jspurefix's own dependency, so it is loaded from jspurefix's folder.
// api.ts imports this module before jspurefix.
const here = createRequire(import.meta.url);
createRequire(here.resolve('jspurefix'))('reflect-metadata');
