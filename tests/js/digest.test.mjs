// The byte-identity guard (bench/digest.mjs) on the bundled sample: the same
// replay gives the same digest, and a change of output changes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { replayDigest, VARIANTS } from '../../bench/digest.mjs';

const sample = readFileSync(new URL('../fixtures/sample-trajectory.json', import.meta.url), 'utf8');

test('a replay digest is stable and follows the output', () => {
  const a = replayDigest(sample, VARIANTS.defaults);
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.equal(replayDigest(sample, VARIANTS.defaults), a);
  // Spilling off changes what the sample's long outputs become.
  assert.notEqual(replayDigest(sample, VARIANTS.noSpill), a);
  assert.notEqual(replayDigest(sample, { budget: 20_000 }), a);
});
