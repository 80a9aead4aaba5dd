import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Endpoint URL rules (docs/webhooks.md): `https` only in production; private, loopback and
 * link-local addresses refused in production, also when a name resolves to one at delivery time;
 * sandbox allows them for local development unless configured otherwise.
 *
 * Two checks, because a name can resolve differently later (DNS rebinding):
 * - `checkEndpointUrl`, at registration and update, looks at the URL text and refuses literal
 *   non-public addresses and the `localhost` names;
 * - `isPublicAddress`, at every delivery, is applied to each address the name resolved to, and the
 *   sender connects only to an address that passed.
 */

export type UrlRule = 'format' | 'scheme' | 'https_required' | 'max_length' | 'private_address' | 'credentials';

export type UrlCheck = { ok: true } | { ok: false; rule: UrlRule; message: string };

export interface UrlCheckOptions {
  /**
   * Sandbox only: whether literal private addresses and `localhost` are accepted (default true,
   * for local development). Production always refuses them.
   */
  allowPrivateInSandbox?: boolean;
}

/** Longest accepted endpoint URL, in UTF-16 code units of the text as given. */
export const MAX_URL_LENGTH = 2048;

// ----- Address classification --------------------------------------------------------------------

/**
 * IPv4 ranges that are not globally reachable: the IANA IPv4 Special-Purpose Address Registry
 * (RFC 6890 and updates) entries with "Globally Reachable = False", plus multicast (RFC 5771) and the
 * reserved 240.0.0.0/4 including broadcast. Nothing on the public internet legitimately answers a
 * webhook from these.
 */
const IPV4_NOT_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", includes the unspecified 0.0.0.0 (RFC 791)
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space, carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback (RFC 1122)
  ['169.254.0.0', 16], // link-local, includes cloud metadata 169.254.169.254 (RFC 3927)
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0', 24], // TEST-NET-1 documentation (RFC 5737)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast (RFC 7526)
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking (RFC 2544)
  ['198.51.100.0', 24], // TEST-NET-2 (RFC 5737)
  ['203.0.113.0', 24], // TEST-NET-3 (RFC 5737)
  ['224.0.0.0', 4], // multicast (RFC 5771)
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 limited broadcast (RFC 1112, RFC 919)
];

/**
 * IPv6 ranges inside global unicast 2000::/3 that are nevertheless not globally reachable (IANA
 * IPv6 Special-Purpose Address Registry). Everything outside 2000::/3 is refused as a whole: that
 * covers ::/128 unspecified, ::1 loopback, ::/96 IPv4-compatible, 100::/64 discard, 64:ff9b:1::/48
 * local NAT64, 5f00::/16 SRv6, fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local and
 * ff00::/8 multicast. The forms that embed an IPv4 address are judged by that address (see below).
 */
const IPV6_NOT_PUBLIC: readonly (readonly [string, number])[] = [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID... (RFC 2928)
  ['2001:db8::', 32], // documentation (RFC 3849)
  ['3fff::', 20], // documentation (RFC 9637)
];

const ipv4Denied = new BlockList();
for (const [network, prefix] of IPV4_NOT_PUBLIC) ipv4Denied.addSubnet(network, prefix, 'ipv4');

const ipv6Denied = new BlockList();
for (const [network, prefix] of IPV6_NOT_PUBLIC) ipv6Denied.addSubnet(network, prefix, 'ipv6');

const ipv6GlobalUnicast = new BlockList();
ipv6GlobalUnicast.addSubnet('2000::', 3, 'ipv6');

function isPublicIPv4(ip: string): boolean {
  return !ipv4Denied.check(ip, 'ipv4');
}

/** The 16 bytes of a valid IPv6 text form (without zone), including a trailing dotted quad. */
function ipv6Bytes(ip: string): Uint8Array {
  let text = ip;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const maybeQuad = text.slice(lastColon + 1);
  if (maybeQuad.includes('.')) {
    for (const part of maybeQuad.split('.')) tail.push(Number(part));
    // Replace the dotted quad with two hex groups so the rest is uniform.
    text = `${text.slice(0, lastColon + 1)}${(((tail[0] ?? 0) << 8) | (tail[1] ?? 0)).toString(16)}:${(((tail[2] ?? 0) << 8) | (tail[3] ?? 0)).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...restGroups];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function ipv4At(bytes: Uint8Array, offset: number): string {
  return Array.from(bytes.subarray(offset, offset + 4)).join('.');
}

/**
 * IPv6 forms whose traffic ends up at an embedded IPv4 address, which decides: IPv4-mapped
 * ::ffff:0:0/96 (a dual-stack socket connects to the IPv4 address itself), NAT64 64:ff9b::/96
 * (RFC 6052) and 6to4 2002::/16 (RFC 3056). Without this, `[::ffff:127.0.0.1]` or
 * `[64:ff9b::a9fe:a9fe]` would reach loopback or the metadata service.
 */
function embeddedIPv4(bytes: Uint8Array): string | null {
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0x20, 0x02])) return ipv4At(bytes, 2);
  return null;
}

/**
 * True when `ip` is an IPv4 or IPv6 address, in the text form a resolver returns, that is globally
 * reachable: not private, loopback, link-local, unspecified, multicast, shared (CGN), documentation,
 * benchmarking or reserved. Anything else, including text that is not an address and IPv6 with a
 * zone (`fe80::1%eth0`, meaningful only on a local link), gives false: the check fails closed.
 */
export function isPublicAddress(ip: string): boolean {
  if (isIPv4(ip)) return isPublicIPv4(ip);
  if (!isIPv6(ip) || ip.includes('%')) return false;
  const bytes = ipv6Bytes(ip);
  const v4 = embeddedIPv4(bytes);
  // 6to4 sits inside 2000::/3, so it must pass both its own test and the embedded address's.
  if (v4 !== null && !isPublicIPv4(v4)) return false;
  if (
    startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) ||
    startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])
  ) {
    return true;
  }
  return ipv6GlobalUnicast.check(ip, 'ipv6') && !ipv6Denied.check(ip, 'ipv6');
}

// ----- URL check ---------------------------------------------------------------------------------

function refuse(rule: UrlRule, message: string): UrlCheck {
  return { ok: false, rule, message };
}

// Control characters and whitespace, which the WHATWG parser would silently strip or remove.
const INVISIBLE = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * Checks an endpoint URL at registration or update. Rules, in the order they are applied:
 * 1. `max_length`: at most 2048 characters (checked first, before any parsing).
 * 2. `format`: an absolute URL, written `scheme://host...`, without whitespace or control characters
 *    (the WHATWG parser would quietly drop them, so the stored URL would differ from what was sent).
 * 3. `scheme`: `http` or `https`.
 * 4. `https_required`: `https` in production.
 * 5. `credentials`: no `user:password@` part (secrets must not sit in a URL that is listed and logged;
 *    the signature authenticates the sender).
 * 6. `private_address`: in production, and in sandbox when `allowPrivateInSandbox` is false, the host
 *    must not be `localhost`, a `*.localhost` name (RFC 6761 §6.3) or a literal non-public IPv4/IPv6
 *    address. Literals are judged after the WHATWG parser's normalisation, so `http://2130706433/`,
 *    `http://0x7f.1/` and `http://[::ffff:127.0.0.1]/` are all recognised as 127.0.0.1. Other names
 *    are checked after resolution, at delivery time, by `isPublicAddress`.
 */
export function checkEndpointUrl(url: string, mode: 'sandbox' | 'production', options: UrlCheckOptions = {}): UrlCheck {
  if (url.length > MAX_URL_LENGTH) {
    return refuse('max_length', `url must be at most ${MAX_URL_LENGTH} characters`);
  }
  if (INVISIBLE.test(url)) return refuse('format', 'url must not contain whitespace or control characters');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('format', 'url must be an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return refuse('scheme', 'url scheme must be http or https');
  }
  // The WHATWG parser accepts `http:example.com` and `http:/example.com`; require the usual form.
  const afterScheme = url.slice(parsed.protocol.length);
  if (!afterScheme.startsWith('//') || parsed.hostname === '') {
    return refuse('format', 'url must have the form scheme://host/path');
  }
  if (mode === 'production' && parsed.protocol !== 'https:') {
    return refuse('https_required', 'url must use https in production');
  }
  // `http://@host` parses with an empty username, so look at the authority as written as well.
  const authority = afterScheme.slice(2).split(/[/?#\\]/, 1)[0] ?? '';
  if (parsed.username !== '' || parsed.password !== '' || authority.includes('@')) {
    return refuse('credentials', 'url must not contain a user name or password');
  }
  const checkPrivate = mode === 'production' || options.allowPrivateInSandbox === false;
  if (checkPrivate && !isPublicHost(parsed.hostname)) {
    return refuse('private_address', 'url must not point to a private, loopback, link-local or reserved address');
  }
  return { ok: true };
}

/** `hostname` as the URL parser returns it: lowercase, IPv6 in brackets, IPv4 normalised. */
function isPublicHost(hostname: string): boolean {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name === 'localhost' || name.endsWith('.localhost')) return false;
  if (name.startsWith('[') && name.endsWith(']')) return isPublicAddress(name.slice(1, -1));
  if (isIPv4(name)) return isPublicAddress(name);
  return true;
}
