// OCR of snapshot images for grounding recall and legibility (EVALUATION.md §1:
// tesseract, 2× upscale, `--psm 6`, as scripts/tesseract.mjs runs it for the
// bench and the playground alike), cached by the hash of its pixels in memory
// and on disk (bench/out/ocr-cache/, one text file per image), so each distinct
// image is read once across policies, steps, worker processes and runs.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OCR_SCALE, decodeGray, pixelKey, readPngSync } from '../scripts/tesseract.mjs';

export { OCR_SETTINGS, decodeGray, encodeGray, tesseractAvailable, upscale } from '../scripts/tesseract.mjs';

/**
 * An OCR reader with a cache: `read(url)` → text (or null when tesseract
 * failed) for a `data:image/png;base64,…` URL. `stats` counts images read,
 * cache hits and seconds spent in tesseract.
 */
export function ocrReader({ cacheDir = null, scale = OCR_SCALE } = {}) {
  const memory = new Map();
  const stats = { images: 0, memoryHits: 0, diskHits: 0, failed: 0, seconds: 0 };
  if (cacheDir) mkdirSync(cacheDir, { recursive: true });
  const read = (url) => {
    const png = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
    // Keyed by the pixels tesseract reads, not the PNG bytes: an encoder
    // change that keeps the pixels keeps the cache.
    const gray = decodeGray(png);
    const hash = pixelKey(gray);
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
    let text = null;
    try {
      text = readPngSync(png, gray, { scale });
    } catch {
      stats.failed++;
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
