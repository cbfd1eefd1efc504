import type { CompressSettings, FormatName } from './types/options.js';

/** A fact class the calibration scores. */
export type FactClass = 'identifier' | 'path' | 'number' | 'message';

/** One probe: realistic tool output and the facts an agent quotes back from it. */
export interface CalibrationProbe {
  id: 'cat -n' | 'pytest' | 'traceback' | 'grep -n';
  text: string;
  facts: [FactClass, string][];
}

/** The probes `calibrateOptical` renders. */
export const CALIBRATION_PROBES: readonly CalibrationProbe[];
/** The fact classes, in report order. */
export const FACT_CLASSES: readonly FactClass[];
/** What the model is asked with each probe's snapshots. */
export const CALIBRATION_INSTRUCTION: string;

/** Calibration options: compress settings (the optical settings in force, `provider`, `model`, `format`) plus its own. */
export interface CalibrationOptions extends CompressSettings {
  /** Font sizes (px) to probe; default `optical.minFontPx` and `optical.fontPx`. */
  fontSizes?: number[];
  /** Share of every fact class a size must read back to pass (default 0.95). */
  minLegibility?: number;
  /** Anthropic requests: `max_tokens` (default 4096). */
  maxTokens?: number;
  /** The instruction sent with the snapshots (default `CALIBRATION_INSTRUCTION`). */
  instruction?: string;
}

/** Legibility: share of facts read back, overall and by class. */
export interface Legibility {
  overall: number;
  byClass: Partial<Record<FactClass, number>>;
}

/** What `calibrateOptical` measured and recommends. */
export interface Calibration {
  model?: string;
  format: FormatName;
  provider: string;
  sizes: number[];
  minLegibility: number;
  legibility: Legibility & { byFontPx: Record<number, Legibility> };
  probes: { probe: string; fontPx: number; images: number; imageTokens: number; facts: number; read: number; missed: string[] }[];
  recommended: { enabled: boolean | 'auto'; minFontPx?: number; fontPx?: number };
  /** Settings to pass back to `compress`: `{ ...yours, ...calibration.options }`. */
  options: Pick<CompressSettings, 'optical' | 'models'>;
  reason: string;
}

/**
 * Renders the probes at each font size, sends them through `callModel` (the
 * request in `options.format`, the reply a string or the provider's response)
 * and scores the facts that came back.
 */
export function calibrateOptical(
  callModel: (request: Record<string, unknown>, probe: { probe: string; fontPx: number; format: FormatName }) => unknown | Promise<unknown>,
  options?: CalibrationOptions,
): Promise<Calibration>;

/** The text of a model reply: a string or a provider's (or the AI SDK's) response. */
export function replyText(reply: unknown): string;

/** The request asking the model to transcribe `images`, in `format`. */
export function probeRequest(
  format: FormatName,
  images: { mediaType: string; data: string }[],
  options?: { model?: string; instruction?: string; maxTokens?: number; detail?: 'high' | 'low' },
): Record<string, unknown>;
