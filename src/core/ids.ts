import { randomBytes } from 'node:crypto';

const POOL_SIZE = 16 * 512;
let pool = randomBytes(POOL_SIZE);
let poolOffset = POOL_SIZE;
let lastMs = -1;
let sequence = 0;

function takeRandom(): Buffer {
  if (poolOffset + 16 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix ms, then random bits. Ids made in one process within the
 * same millisecond stay ordered, using a 12-bit counter in `rand_a`.
 */
export function uuidv7(now: number = Date.now()): string {
  const bytes = Buffer.from(takeRandom());
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    sequence = bytes[6] & 0x07; // start low so the counter has room
  }
  bytes[0] = Math.floor(now / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(now / 2 ** 32) & 0xff;
  bytes[2] = (now >>> 24) & 0xff;
  bytes[3] = (now >>> 16) & 0xff;
  bytes[4] = (now >>> 8) & 0xff;
  bytes[5] = now & 0xff;
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  let out = '';
  for (let i = 0; i < 16; i++) {
    out += HEX[bytes[i]];
    if (i === 3 || i === 5 || i === 7 || i === 9) out += '-';
  }
  return out;
}

/** A short random id for workers and lease tokens. */
export function shortId(): string {
  return randomBytes(6).toString('hex');
}
