// Minimal typings for the parts of oidc-provider 9 the peer server uses (the package ships none).
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type Configuration = Record<string, unknown>;

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
