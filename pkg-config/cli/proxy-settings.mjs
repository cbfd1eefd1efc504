// The settings module of `tracelite proxy` (createThreadedProxy imports it in
// every thread): the upstream and compress options from the command line,
// the secret from TRACELITE_SECRET, spills in memory or under --store DIR.
import { FileStore } from '../adapters/file-store/index.js';

/** `data`: `{ upstream, options, store?, ttlSeconds?, maxBodyBytes?, explain? }` from the command line. */
export default function settings({ upstream, options, store, ttlSeconds, maxBodyBytes, explain }) {
  const secret = process.env.TRACELITE_SECRET;
  return {
    upstream,
    options,
    ...(secret ? { secret } : {}),
    ...(store ? { store: new FileStore({ root: store, ...(ttlSeconds === undefined ? {} : { ttlSeconds }) }) } : {}),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    // --explain: each request's report in words on stderr (formatReport).
    ...(explain ? { debug: true } : {}),
  };
}
