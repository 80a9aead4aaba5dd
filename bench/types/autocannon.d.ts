// Minimal typings for the parts of autocannon 8 the harness uses (the package ships none).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: AutocannonRequest[];
    idReplacement?: boolean;
    expectBody?: string;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    sent?: number;
  }

  export interface AutocannonResult {
    url: string;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    duration: number;
    start: Date;
    finish: Date;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(options: AutocannonOptions, callback: (error: Error | null, result: AutocannonResult) => void): Instance;
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult> & Instance;
  export default autocannon;
}
