import { randomBytes } from 'node:crypto';

const POOL_SIZE = 16 * 512;
let pool = randomBytes(POOL_SIZE);
let poolOffset = POOL_SIZE;
let lastMs = -1;
let sequence = 0;

const HEX_CODES = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** Where byte i's two hex digits go in the 36-character form (dashes at 8, 13, 18, 23). */
const POSITION = Array.from({ length: 16 }, (_, i) => 2 * i + (i >= 4 ? 1 : 0) + (i >= 6 ? 1 : 0) + (i >= 8 ? 1 : 0) + (i >= 10 ? 1 : 0));
/** The character codes of the id being made, reused: one string allocation per id. */
const CODES: number[] = Array.from({ length: 36 }, () => 45);

function put(i: number, byte: number): void {
  CODES[POSITION[i]] = HEX_CODES[byte >>> 4];
  CODES[POSITION[i] + 1] = HEX_CODES[byte & 0x0f];
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix ms, then random bits. Ids made in one process within the
 * same millisecond stay ordered, using a 12-bit counter in `rand_a`. The random bytes are read
 * from a pool in place and the text is made in one go (an enqueue makes one id each).
 */
export function uuidv7(now: number = Date.now()): string {
  if (poolOffset + 16 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const o = poolOffset;
  poolOffset += 16;
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    sequence = pool[o + 6] & 0x07; // start low so the counter has room
  }
  put(0, Math.floor(now / 2 ** 40) & 0xff);
  put(1, Math.floor(now / 2 ** 32) & 0xff);
  put(2, (now >>> 24) & 0xff);
  put(3, (now >>> 16) & 0xff);
  put(4, (now >>> 8) & 0xff);
  put(5, now & 0xff);
  put(6, 0x70 | ((sequence >>> 8) & 0x0f));
  put(7, sequence & 0xff);
  put(8, (pool[o + 8] & 0x3f) | 0x80);
  for (let i = 9; i < 16; i++) put(i, pool[o + i]);
  return String.fromCharCode.apply(null, CODES);
}

/** A short random id for workers and lease tokens. */
export function shortId(): string {
  return randomBytes(6).toString('hex');
}
