// Cache segments as `SpillStore.exportCache` seals them (format
// tracelite-cache/3): `{"format":"tracelite-cache/3","mac":"<64 hex>",<body>`,
// the MAC an HMAC-SHA256 under the host's key of the format, the session and
// the body, each after its length (u64 little-endian). Written here apart
// from the core (node:crypto), so the tests check the format, not the code.
import { createHmac } from 'node:crypto';

export const SEGMENT_HEAD = '{"format":"tracelite-cache/3","mac":"';

/** `text` (a segment, perhaps changed) sealed again for `{ key, session }`, as its holder could. */
export function reseal(text, { key, session = 'default' }) {
  if (!text.startsWith(SEGMENT_HEAD)) throw new Error('not a sealed segment');
  const body = text.slice(SEGMENT_HEAD.length + 66);
  const mac = createHmac('sha256', key);
  for (const part of ['tracelite-cache/3', session, body]) {
    const bytes = Buffer.from(part, 'utf8');
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(bytes.length));
    mac.update(length);
    mac.update(bytes);
  }
  return `${SEGMENT_HEAD}${mac.digest('hex')}",${body}`;
}
