import type { CompressSettings } from './index.js';

/** One rendered PNG image (base64 `data`). */
export interface SnapshotImage {
  width: number;
  height: number;
  mediaType: 'image/png';
  data: string;
}

/** What `renderSnapshot` drew and what it costs for the provider. */
export interface Snapshot {
  fontPx: number;
  columns: number;
  rows: number;
  lines: number;
  /** Characters drawn as a placeholder (missing from the font). */
  missing: number;
  /** Image tokens of all images for `options.provider`. */
  imageTokens: number;
  images: SnapshotImage[];
}

/** Renders `text` as the optical stage would; `null` when there is nothing to draw. */
export function renderSnapshot(text: string, options?: CompressSettings): Snapshot | null;
