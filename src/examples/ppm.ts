/** Binary PPM (P6, 8-bit RGB) images and a bilinear resize, in plain JS (no native dependencies). */

export interface RgbImage {
  width: number;
  height: number;
  /** width × height × 3 bytes, rows top to bottom. */
  pixels: Uint8Array;
}

export function decodePpm(data: Uint8Array): RgbImage {
  const fields: string[] = [];
  let offset = 0;
  // Header: "P6", width, height, maxval, separated by whitespace; '#' starts a comment line.
  while (fields.length < 4) {
    while (offset < data.length && isSpace(data[offset])) offset += 1;
    if (data[offset] === 0x23) {
      while (offset < data.length && data[offset] !== 0x0a) offset += 1;
      continue;
    }
    const start = offset;
    while (offset < data.length && !isSpace(data[offset])) offset += 1;
    if (start === offset) throw new Error('not a PPM image: the header ends early');
    fields.push(Buffer.from(data.subarray(start, offset)).toString('latin1'));
  }
  offset += 1; // the single whitespace before the raster
  const [magic, w, h, max] = fields;
  const width = Number(w);
  const height = Number(h);
  if (magic !== 'P6') throw new Error(`not a binary PPM image (magic ${JSON.stringify(magic)}, expected P6)`);
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) throw new Error(`bad PPM size ${w}x${h}`);
  if (max !== '255') throw new Error(`only 8-bit PPM images are supported (maxval ${max})`);
  const size = width * height * 3;
  if (data.length - offset < size) throw new Error(`PPM raster is truncated: ${data.length - offset} of ${size} bytes`);
  return { width, height, pixels: new Uint8Array(data.subarray(offset, offset + size)) };
}

export function encodePpm(image: RgbImage): Buffer {
  return Buffer.concat([Buffer.from(`P6\n${image.width} ${image.height}\n255\n`, 'latin1'), Buffer.from(image.pixels)]);
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** Bilinear resampling with pixel centres aligned (the usual "half-pixel" mapping). */
export function resizeBilinear(source: RgbImage, width: number, height: number): RgbImage {
  const out = new Uint8Array(width * height * 3);
  const sx = source.width / width;
  const sy = source.height / height;
  const src = source.pixels;
  for (let y = 0; y < height; y += 1) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), source.height - 1);
    const y0 = Math.floor(fy);
    const y1 = Math.min(y0 + 1, source.height - 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x += 1) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), source.width - 1);
      const x0 = Math.floor(fx);
      const x1 = Math.min(x0 + 1, source.width - 1);
      const wx = fx - x0;
      const a = (y0 * source.width + x0) * 3;
      const b = (y0 * source.width + x1) * 3;
      const c = (y1 * source.width + x0) * 3;
      const d = (y1 * source.width + x1) * 3;
      const o = (y * width + x) * 3;
      for (let ch = 0; ch < 3; ch += 1) {
        const top = src[a + ch] * (1 - wx) + src[b + ch] * wx;
        const bottom = src[c + ch] * (1 - wx) + src[d + ch] * wx;
        out[o + ch] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return { width, height, pixels: out };
}

/** A test card: a horizontal red ramp, a vertical green ramp, a blue checkerboard. */
export function testCard(width: number, height: number): RgbImage {
  const pixels = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const o = (y * width + x) * 3;
      pixels[o] = Math.round((x / Math.max(1, width - 1)) * 255);
      pixels[o + 1] = Math.round((y / Math.max(1, height - 1)) * 255);
      pixels[o + 2] = (Math.floor(x / 16) + Math.floor(y / 16)) % 2 === 0 ? 255 : 0;
    }
  }
  return { width, height, pixels };
}
