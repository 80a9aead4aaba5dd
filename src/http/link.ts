import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/**
 * RFC 8288 `Link` headers on paged listings, beside `X-Cursor-Next` and `X-Cursor-Prev`: the same
 * cursors as absolute URLs under the public base URL, with the request's own query (its filters and
 * `limit`) and `cursor` replaced, so that generic HTTP clients and libraries that follow
 * `rel="next"` page through a listing unchanged. No link is given for an empty cursor.
 *
 * Routes take part by declaring a `link` response header in their 200 schema (as `pageHeaders`
 * does): the hook is added when such a route is registered, and no other route pays for it.
 */
export function pageLinks(base: string, requestUrl: string, next: string, prev: string): string | null {
  const [path = '', query = ''] = requestUrl.split('?', 2) as [string?, string?];
  const link = (cursor: string, rel: string) => {
    const params = new URLSearchParams(query);
    params.set('cursor', cursor);
    return `<${base}${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [...(next === '' ? [] : [link(next, 'next')]), ...(prev === '' ? [] : [link(prev, 'prev')])];
  return links.length === 0 ? null : links.join(', ');
}

function declaresLink(route: RouteOptions): boolean {
  const ok = (route.schema?.response as Record<string, { headers?: Record<string, unknown> }> | undefined)?.[200];
  return ok?.headers?.link !== undefined;
}

function header(reply: FastifyReply, name: string): string {
  const value = reply.getHeader(name);
  return typeof value === 'string' ? value : '';
}

export function installPageLinks(app: FastifyInstance, publicUrl: string): void {
  app.addHook('onRoute', (route) => {
    if (!declaresLink(route)) return;
    const hook = (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ) => {
      const links =
        reply.statusCode === 200 ? pageLinks(publicUrl, request.url, header(reply, 'x-cursor-next'), header(reply, 'x-cursor-prev')) : null;
      if (links !== null) reply.header('link', links);
      done(null, payload);
    };
    const existing = route.onSend as unknown;
    route.onSend = (existing === undefined ? [hook] : [...[existing].flat(), hook]) as RouteOptions['onSend'];
  });
}
