// OCR of snapshot images for grounding recall (EVALUATION.md §1: tesseract,
// 2× upscale, `--psm 6`), cached by the hash of its pixels in memory and on disk
// (bench/out/ocr-cache/, one text file per image), so each distinct image is
// read once across policies, steps, worker processes and runs.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const CHANNELS = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * Decodes a non-interlaced PNG (grayscale, gray+alpha, RGB or RGBA; any bit
 * depth of those) to 8-bit gray: `{ width, height, gray }`. Throws on others
 * (palette, interlaced).
 */
export function decodeGray(png) {
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let depth = 8;
  let color = 0;
  const idat = [];
  while (pos < png.length) {
    const len = png.readUInt32BE(pos);
    const type = png.toString('latin1', pos + 4, pos + 8);
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      color = data[9];
      if (data[12] !== 0) throw new Error('interlaced PNG');
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const channels = CHANNELS[color];
  if (!channels) throw new Error(`PNG color type ${color} not supported`);
  const bpp = Math.max(1, (channels * depth) >> 3);
  const stride = Math.ceil((width * channels * depth) / 8);
  const raw = inflateSync(Buffer.concat(idat));
  const rows = Buffer.alloc(stride * height);
  const prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = rows.subarray(y * stride, (y + 1) * stride);
    const up = y === 0 ? prev : rows.subarray((y - 1) * stride, y * stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? out[i - bpp] : 0;
      const b = up[i];
      const c = i >= bpp ? up[i - bpp] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[i] = v & 0xff;
    }
  }
  const max = (1 << depth) - 1;
  const sample = (y, k) => {
    // Sample k of row y, scaled to 0..255.
    if (depth === 8) return rows[y * stride + k];
    if (depth === 16) return rows[y * stride + 2 * k];
    const bit = k * depth;
    const byte = rows[y * stride + (bit >> 3)];
    return Math.round((((byte >> (8 - depth - (bit & 7))) & max) * 255) / max);
  };
  const gray = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const k = x * channels;
      let v = channels >= 3 ? (sample(y, k) * 299 + sample(y, k + 1) * 587 + sample(y, k + 2) * 114) / 1000 : sample(y, k);
      if (channels === 2 || channels === 4) {
        const alpha = sample(y, k + channels - 1) / 255;
        v = v * alpha + 255 * (1 - alpha);
      }
      gray[y * width + x] = Math.round(v);
    }
  }
  return { width, height, gray };
}

/** Bilinear upscale of an 8-bit gray image by `f`. */
export function upscale({ width, height, gray }, f = 2) {
  const w = width * f;
  const h = height * f;
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const sy = Math.min(height - 1, Math.max(0, (y + 0.5) / f - 0.5));
    const y0 = Math.floor(sy);
    const y1 = Math.min(height - 1, y0 + 1);
    const fy = sy - y0;
    for (let x = 0; x < w; x++) {
      const sx = Math.min(width - 1, Math.max(0, (x + 0.5) / f - 0.5));
      const x0 = Math.floor(sx);
      const x1 = Math.min(width - 1, x0 + 1);
      const fx = sx - x0;
      const top = gray[y0 * width + x0] * (1 - fx) + gray[y0 * width + x1] * fx;
      const bottom = gray[y1 * width + x0] * (1 - fx) + gray[y1 * width + x1] * fx;
      out[y * w + x] = Math.round(top * (1 - fy) + bottom * fy);
    }
  }
  return { width: w, height: h, gray: out };
}

/** Encodes an 8-bit gray image as PNG. */
export function encodeGray({ width, height, gray }) {
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) Buffer.from(gray.buffer, gray.byteOffset + y * width, width).copy(raw, y * (width + 1) + 1);
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Whether tesseract is on PATH. */
export function tesseractAvailable() {
  try {
    execFileSync('tesseract', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * An OCR reader with a cache: `read(url)` → text (or null when tesseract
 * failed) for a `data:image/png;base64,…` URL. `stats` counts images read,
 * cache hits and seconds spent in tesseract.
 */
export function ocrReader({ cacheDir = null, scale = 2 } = {}) {
  const memory = new Map();
  const stats = { images: 0, memoryHits: 0, diskHits: 0, failed: 0, seconds: 0 };
  if (cacheDir) mkdirSync(cacheDir, { recursive: true });
  const read = (url) => {
    const png = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
    // Keyed by the pixels tesseract reads, not the PNG bytes: an encoder
    // change that keeps the pixels keeps the cache.
    const gray = decodeGray(png);
    const hash = createHash('sha256').update(`${gray.width}x${gray.height}:`).update(gray.gray).digest('hex').slice(0, 32);
    if (memory.has(hash)) {
      stats.memoryHits++;
      return memory.get(hash);
    }
    const file = cacheDir ? join(cacheDir, `${hash}-x${scale}.txt`) : null;
    if (file && existsSync(file)) {
      stats.diskHits++;
      const text = readFileSync(file, 'utf8');
      memory.set(hash, text);
      return text;
    }
    const started = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'tl-ocr-'));
    let text = null;
    try {
      const input = join(dir, 'snap.png');
      writeFileSync(input, scale === 1 ? png : encodeGray(upscale(gray, scale)));
      text = execFileSync('tesseract', [input, '-', '--psm', '6'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 300_000,
        env: { ...process.env, OMP_THREAD_LIMIT: '1' },
      });
    } catch {
      stats.failed++;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    stats.images++;
    stats.seconds += (Date.now() - started) / 1000;
    memory.set(hash, text);
    if (file && text != null) {
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, text);
      renameSync(tmp, file);
    }
    return text;
  };
  return { read, stats };
}
