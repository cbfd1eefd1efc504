// TypeScript types of the TraceLite package. The options, the report and the
// core's error codes are generated from the Rust declarations (./types/, by
// tests/ts_types.rs); the error classes and the host's codes are in
// ./errors.d.ts; the functions and classes are declared here.
import type { SpillStore } from './spill.js';
export * from './spill.js';

export * from './types/options.js';
export * from './types/report.js';
export * from './types/errors.js';
export * from './errors.js';
import type { CompressSettings, FormatName } from './types/options.js';
import type { Report, SpillBlob, UrlImage } from './types/report.js';

/** Settings plus host objects. */
export interface CompressOptions extends CompressSettings {
  /** Where spills and caches live; a module-wide store by default. */
  store?: SpillStore;
  /** Your tokenizer; the built-in o200k estimator by default. */
  countTokens?: (text: string) => number;
  /** The previous compressed request, to measure prefix reuse. */
  previous?: object | string;
}

/** Compresses a provider request; the output has the input's format. */
export function compress<T extends object = Record<string, unknown>>(
  request: T | string,
  options?: CompressOptions,
): {
  request: T;
  report: Report;
  spills: SpillBlob[];
  /** With `optical.imageUrl`: every snapshot the request carries by URL, once each, to serve at its `url`. */
  images: UrlImage[];
};

/** Estimated o200k_base tokens of a text. */
export function estimateTokens(text: string): number;

/** What the redactor masked: the text, how many secrets, which detectors (never values). */
export interface Redacted<T = string> { text: T; count: number; kinds: string[] }
/** Masks secrets in a text as the core masks them in excerpts (`[REDACTED:<kind>]`). */
export function redactText(text: string): Redacted;
/** Masks secrets in every string value of a parsed JSON value (keys kept), in place where it can. */
export function redactJson<T>(value: T): { value: T; count: number; kinds: string[] };

/** The library version. */
export function version(): string;

/** A trajectory in the `../shared/traces` schema. */
export interface Trajectory {
  id?: string;
  task: string;
  system?: string | null;
  steps: { thought?: string | null; tool: string; args?: unknown; observation?: string }[];
}

/** The request an agent loop sends before step `t`. */
export function trajectoryToRequest(trajectory: Trajectory | string, t: number, format?: FormatName): Record<string, unknown>;

export * from './compact.js';
export * from './config.js';
export * from './replay.js';
export * from './session.js';
export * from './optical.js';
export * from './calibrate.js';
export * from './formats.js';
export * from './memory.js';
export * from './format-report.js';
