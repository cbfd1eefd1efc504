// Tesseract OCR of snapshot PNGs, as EVALUATION.md §1 and issue 40 measure
// legibility: the image as 8-bit gray, upscaled 2x (bilinear), read by
// `tesseract IMAGE - --psm 6` with one OpenMP thread. Shared by `make bench`
// (bench/ocr.mjs adds its cache) and the playground's server (www/serve.mjs:
// its POST /ocr endpoint), so both read an image alike; www/ may not import
// bench/. Which facts a text shows (the reading rule) is
// www/legibility.js. Node only (child_process); never shell.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';

/** Upscale factor before OCR. */
export const OCR_SCALE = 2;
/** Tesseract's page segmentation: one uniform block of text. */
export const OCR_ARGS = ['--psm', '6'];
/** The settings in words (reports, the playground). */
export const OCR_SETTINGS = 'tesseract, 2x bilinear upscale, --psm 6';
/** The program, looked up on PATH. */
export const TESSERACT = 'tesseract';
/** Largest image decoded (pixels before the upscale): 4096 x 4096; snapshots are at most 2048 on a side. */
export const MAX_PIXELS = 4096 * 4096;
/** Longest OCR of one image before tesseract is stopped (ms). */
export const OCR_TIMEOUT_MS = 300_000;

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

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Bit depths PNG allows per color type (grayscale, RGB, gray+alpha, RGBA). */
const DEPTHS = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 4: [8, 16], 6: [8, 16] };

/** An error of an image that cannot be read, with a stable `code`. */
export class PngError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'PngError';
    this.code = code;
  }
}

/** Whether `bytes` start with the PNG signature. */
export function isPng(bytes) {
  return bytes.length >= SIGNATURE.length && SIGNATURE.equals(bytes.subarray(0, SIGNATURE.length));
}

/**
 * Decodes a non-interlaced PNG (grayscale, gray+alpha, RGB or RGBA; any bit
 * depth of those) to 8-bit gray: `{ width, height, gray }`. Throws a
 * `PngError` on anything else: `NOT_PNG` (no signature), `PNG_UNSUPPORTED`
 * (palette, interlaced), `PNG_TOO_LARGE` (over `maxPixels`), `PNG_CORRUPT`
 * (chunks or image data that do not add up).
 */
export function decodeGray(png, { maxPixels = MAX_PIXELS } = {}) {
  if (!isPng(png)) throw new PngError('NOT_PNG', 'not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let depth = 8;
  let color = 0;
  const idat = [];
  while (pos < png.length) {
    if (pos + 12 > png.length) throw new PngError('PNG_CORRUPT', 'truncated PNG chunk');
    const len = png.readUInt32BE(pos);
    const type = png.toString('latin1', pos + 4, pos + 8);
    if (pos + 12 + len > png.length) throw new PngError('PNG_CORRUPT', `truncated PNG chunk ${JSON.stringify(type)}`);
    if (pos === 8 && (type !== 'IHDR' || len !== 13)) throw new PngError('PNG_CORRUPT', 'PNG does not start with IHDR');
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      color = data[9];
      if (data[12] !== 0) throw new PngError('PNG_UNSUPPORTED', 'interlaced PNG');
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const channels = CHANNELS[color];
  if (!channels) throw new PngError('PNG_UNSUPPORTED', `PNG color type ${color} not supported`);
  if (!DEPTHS[color].includes(depth)) throw new PngError('PNG_CORRUPT', `bit depth ${depth} is not valid for PNG color type ${color}`);
  if (width === 0 || height === 0) throw new PngError('PNG_CORRUPT', 'PNG of no pixels');
  if (width * height > maxPixels) throw new PngError('PNG_TOO_LARGE', `PNG of ${width}x${height} pixels is over ${maxPixels} pixels`);
  const bpp = Math.max(1, (channels * depth) >> 3);
  const stride = Math.ceil((width * channels * depth) / 8);
  let raw;
  try {
    raw = inflateSync(Buffer.concat(idat), { maxOutputLength: (stride + 1) * height });
  } catch (err) {
    throw new PngError('PNG_CORRUPT', `PNG image data does not inflate to ${width}x${height} pixels: ${err.message}`);
  }
  if (raw.length < (stride + 1) * height) throw new PngError('PNG_CORRUPT', 'PNG image data is shorter than its size');
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
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Key of an image by the pixels tesseract reads (an encoder change that keeps the pixels keeps the key). */
export function pixelKey({ width, height, gray }) {
  return createHash('sha256').update(`${width}x${height}:`).update(gray).digest('hex').slice(0, 32);
}

/** The PNG tesseract reads for an image decoded by `decodeGray`: upscaled by `scale` (as given at 1). */
export function ocrInput(png, gray, scale = OCR_SCALE) {
  return scale === 1 ? png : encodeGray(upscale(gray, scale));
}

/** Arguments and options of the tesseract run on the PNG at `file` (stdout: the text). */
function command(file, timeout) {
  return [[file, '-', ...OCR_ARGS], {
    encoding: 'utf8',
    timeout,
    killSignal: 'SIGKILL',
    maxBuffer: 16 << 20,
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
  }];
}

/**
 * Tesseract's text of a PNG (`png`, decoded as `gray`), read as the bench
 * reads it; synchronous (the bench's worker processes). Throws when tesseract
 * fails or is missing.
 */
export function readPngSync(png, gray, { scale = OCR_SCALE, timeout = OCR_TIMEOUT_MS, bin = TESSERACT } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tl-ocr-'));
  try {
    const input = join(dir, 'snap.png');
    writeFileSync(input, ocrInput(png, gray, scale));
    const [args, options] = command(input, timeout);
    return execFileSync(bin, args, { ...options, stdio: ['ignore', 'pipe', 'ignore'] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same, asynchronous (the playground's server). Rejects with the
 * child's error: `code` `ENOENT` when tesseract is not installed, `killed`
 * when it ran over `timeout`.
 */
export async function readPng(png, gray, { scale = OCR_SCALE, timeout = OCR_TIMEOUT_MS, bin = TESSERACT } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'tl-ocr-'));
  try {
    const input = join(dir, 'snap.png');
    await writeFile(input, ocrInput(png, gray, scale));
    const [args, options] = command(input, timeout);
    return await new Promise((resolve, reject) => {
      const child = execFile(bin, args, options, (err, stdout) => (err ? reject(err) : resolve(stdout)));
      child.stdin?.end();
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether tesseract (`bin`) runs. */
export function tesseractAvailable(bin = TESSERACT) {
  try {
    execFileSync(bin, ['--version'], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/** Tesseract's version line, or null when `bin` does not run (asynchronous). */
export function tesseractVersion(bin = TESSERACT) {
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve(err ? null : `${stdout}${stderr}`.split('\n')[0].trim() || 'tesseract');
    });
  });
}
