import type { CompressSettings } from './index.js';

/** Every setting at its documented default, in the shape `compress` accepts (a fresh object). */
export function defaultOptions(): Required<Omit<CompressSettings, 'format'>> & { format: null };
