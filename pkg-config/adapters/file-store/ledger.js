// Internal (FileStore): the running counts of a store's root (bytes and blobs
// per session, bytes and sessions per tenant, the total), loaded from disk
// once and kept by every put, delete, expiry and eviction, so that a put costs
// the same with 100 files or 10,000. A put reserves its bytes in one
// synchronous step (checked and counted together), so concurrent puts never
// pass a limit. One ledger per root in a process; in createThreadedProxy's
// worker threads the FileStore asks the main thread's ledger (messages), so
// the threads share one count too.
import * as fs from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { checkName } from '../../core/spill-reader.js';

/** Tenant of the sessions written without one (`put` on the store itself): no tenant limits apply. */
export const UNOWNED = '';
/** File in a session's directory naming its tenant (`~` is no key character: never a blob). */
export const TENANT_FILE = '~tenant';
/** Prefix of a session directory moved aside to be removed (an eviction). */
export const EVICTED_PREFIX = '~evicted-';
/** Where a worker thread finds the main thread's ledger (set by the threaded proxy). */
export const REMOTE_LEDGER = Symbol.for('tracelite.fileStore.ledger');

/** Extension of a blob's file (the core's path pointers end with it). */
export const EXTENSION = '.txt';
/** Prefix of temporary files: `~` is no key character, so no blob is ever named so. */
export const TEMP_PREFIX = '~tmp-';
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/**
 * The counts of one root. `reserve` decides a put: within the session's
 * bytes, the tenant's bytes and sessions (its least recently written other
 * sessions are evicted to make room) and the store's bytes (when the store is
 * full, the oldest sessions of the tenant holding the most bytes are evicted,
 * never the session being written).
 */
export class Ledger {
  total = 0;
  /** session → `{ tenant, bytes, blobs, touched, gen }` */
  sessions = new Map();
  /** tenant → `{ bytes, sessions: Set<session> }` */
  tenants = new Map();
  #gen = 0;

  #tenant(name) {
    let t = this.tenants.get(name);
    if (t === undefined) {
      t = { bytes: 0, sessions: new Set() };
      this.tenants.set(name, t);
    }
    return t;
  }

  #entry(session, tenant, touched) {
    const entry = { tenant, bytes: 0, blobs: 0, touched, gen: ++this.#gen };
    this.sessions.set(session, entry);
    this.#tenant(tenant).sessions.add(session);
    return entry;
  }

  /** Counts what a scan of the disk found: `[{ session, tenant, bytes, blobs, touched }]`. */
  load(found) {
    for (const { session, tenant, bytes, blobs, touched } of found) {
      const entry = this.#entry(session, tenant, touched);
      this.#add(entry, bytes, blobs);
    }
  }

  #add(entry, bytes, blobs) {
    entry.bytes += bytes;
    entry.blobs += blobs;
    this.#tenant(entry.tenant).bytes += bytes;
    this.total += bytes;
  }

  /** Takes a session out of the counts (evicted, or its directory is gone). */
  forget(session) {
    const entry = this.sessions.get(session);
    if (entry === undefined) return;
    this.sessions.delete(session);
    const t = this.tenants.get(entry.tenant);
    t.bytes -= entry.bytes;
    t.sessions.delete(session);
    if (t.sessions.size === 0) this.tenants.delete(entry.tenant);
    this.total -= entry.bytes;
  }

  /** The least recently written session of `tenant` other than `except`. */
  #oldest(tenant, except) {
    let found;
    for (const s of this.tenants.get(tenant)?.sessions ?? []) {
      if (s === except) continue;
      const e = this.sessions.get(s);
      if (found === undefined || e.touched < found.touched || (e.touched === found.touched && s < found.session)) {
        found = { session: s, touched: e.touched };
      }
    }
    return found?.session;
  }

  /** The tenant holding the most bytes in sessions other than `except`, ties by name. */
  #fullest(except) {
    let found;
    for (const [name, t] of this.tenants) {
      const bytes = t.bytes - (t.sessions.has(except) ? this.sessions.get(except).bytes : 0);
      if (bytes > 0 && (found === undefined || bytes > found.bytes || (bytes === found.bytes && name < found.name))) {
        found = { name, bytes };
      }
    }
    return found?.name;
  }

  /**
   * Reserves `bytes` for a new blob of `session` (written for `tenant`, or
   * `UNOWNED`) at `now`: `{ ok: true, gen, evicted, tenant }` (the sessions to
   * remove from disk, already out of the counts; `tenant` the session's owner)
   * or `{ ok: false, field, message }`.
   */
  reserve({ session, tenant = UNOWNED, bytes, now, limits }) {
    let entry = this.sessions.get(session);
    if (entry !== undefined && entry.tenant !== tenant && tenant !== UNOWNED) {
      if (entry.tenant !== UNOWNED) {
        return { ok: false, field: 'session', message: 'the session belongs to another tenant' };
      }
      // A session written before tenants were kept (no tenant file) goes to its next writer.
      this.forget(session);
      const adopted = this.#entry(session, tenant, entry.touched);
      this.#add(adopted, entry.bytes, entry.blobs);
      entry = adopted;
    }
    const held = entry?.bytes ?? 0;
    if (held + bytes > limits.maxSessionBytes) {
      return {
        ok: false,
        field: 'maxSessionBytes',
        message: `the session's spill quota is full (${held} bytes held + ${bytes} new > maxSessionBytes ${limits.maxSessionBytes})`,
      };
    }
    // A session that could not fit even alone is refused before anything is evicted for it.
    if (held + bytes > limits.maxBytes) {
      return { ok: false, field: 'maxBytes', message: `the blob does not fit the store (${held} bytes held + ${bytes} new > maxBytes ${limits.maxBytes})`, evicted: [] };
    }
    if (tenant !== UNOWNED && held + bytes > limits.maxTenantBytes) {
      return { ok: false, field: 'maxTenantBytes', message: `the blob does not fit the tenant's quota (${held} bytes held + ${bytes} new > maxTenantBytes ${limits.maxTenantBytes})`, evicted: [] };
    }
    const evicted = [];
    const evict = (name) => {
      evicted.push(name);
      this.forget(name);
    };
    if (tenant !== UNOWNED) {
      const t = this.#tenant(tenant);
      while (entry === undefined && t.sessions.size >= limits.maxTenantSessions) evict(this.#oldest(tenant, session));
      while (t.bytes + bytes > limits.maxTenantBytes) {
        const oldest = this.#oldest(tenant, session);
        if (oldest === undefined) {
          return {
            ok: false,
            field: 'maxTenantBytes',
            message: `the tenant's spill quota is full (${t.bytes} bytes held + ${bytes} new > maxTenantBytes ${limits.maxTenantBytes})`,
            evicted,
          };
        }
        evict(oldest);
      }
    }
    while (this.total + bytes > limits.maxBytes) {
      const fullest = this.#fullest(session);
      if (fullest === undefined) {
        return {
          ok: false,
          field: 'maxBytes',
          message: `the store is full (${this.total} bytes held + ${bytes} new > maxBytes ${limits.maxBytes})`,
          evicted,
        };
      }
      evict(this.#oldest(fullest, session));
    }
    entry ??= this.#entry(session, tenant, now);
    entry.touched = Math.max(entry.touched, now);
    this.#add(entry, bytes, 1);
    return { ok: true, gen: entry.gen, evicted, tenant: entry.tenant };
  }

  /** Gives back a blob's bytes (a reservation not used, a blob removed), if the session is still the one counted (`gen`). */
  release({ session, bytes, gen }) {
    const entry = this.sessions.get(session);
    if (entry === undefined || (gen !== undefined && entry.gen !== gen)) return;
    this.#add(entry, -bytes, -1);
  }

  /** Whether the session counted by a reservation (`gen`) is still counted (not evicted since). */
  counts({ session, gen }) {
    return this.sessions.get(session)?.gen === gen;
  }

  /** A blob rewritten with the same text: its session counts as written now. */
  touch({ session, now }) {
    const entry = this.sessions.get(session);
    if (entry !== undefined) entry.touched = Math.max(entry.touched, now);
  }

  /** `{ totalBytes, sessions: [{ session, tenant, bytes, blobs }], tenants: [{ tenant, bytes, sessions }] }`, sorted by name. */
  usage() {
    const sessions = [...this.sessions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([session, e]) => ({ session, tenant: e.tenant, bytes: e.bytes, blobs: e.blobs }));
    const tenants = [...this.tenants].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tenant, t]) => ({ tenant, bytes: t.bytes, sessions: t.sessions.size }));
    return { totalBytes: this.total, sessions, tenants };
  }
}

/** Whether `name` is a valid session name, key or tenant (the core's check). */
export function isName(name) {
  try {
    checkName('name', name);
    return true;
  } catch {
    return false;
  }
}

/** The key of a directory entry that is a blob's file, else `undefined`. */
export function blobKey(name) {
  if (!name.endsWith(EXTENSION) || name.startsWith(TEMP_PREFIX)) return undefined;
  const key = name.slice(0, -EXTENSION.length);
  return isName(key) ? key : undefined;
}

/** `fn()`, with ENOENT as `missing`. */
export async function unlessMissing(fn, missing) {
  try {
    return await fn();
  } catch (err) {
    if (err?.code === 'ENOENT') return missing;
    throw err;
  }
}

/** The tenant a session directory names (`TENANT_FILE`), else `UNOWNED`. */
export async function readTenant(dir) {
  let handle;
  try {
    handle = await fs.open(join(dir, TENANT_FILE), READ_FLAGS);
  } catch {
    return UNOWNED;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > 128) return UNOWNED;
    const name = (await handle.readFile({ encoding: 'utf8' })).trim();
    return isName(name) ? name : UNOWNED;
  } finally {
    await handle.close();
  }
}

/** What a root holds on disk: `[{ session, tenant, bytes, blobs, touched }]` (blob files only; one scan). */
export async function scanRoot(root) {
  const found = [];
  const entries = await unlessMissing(() => fs.readdir(root, { withFileTypes: true }), []);
  for (const e of entries) {
    if (!e.isDirectory() || !isName(e.name)) continue;
    const dir = join(root, e.name);
    let bytes = 0;
    let blobs = 0;
    let touched = 0;
    for (const name of await unlessMissing(() => fs.readdir(dir), [])) {
      if (blobKey(name) === undefined) continue;
      const st = await unlessMissing(() => fs.lstat(join(dir, name)));
      if (!st?.isFile()) continue;
      bytes += st.size;
      blobs += 1;
      touched = Math.max(touched, st.mtimeMs);
    }
    found.push({ session: e.name, tenant: await readTenant(dir), bytes, blobs, touched });
  }
  return found;
}

/** Ledgers of this thread (or process), by root: `{ ledger, loaded }`. */
const local = new Map();

/** The ledger of `root` in this thread, loaded from disk on first use. */
async function localLedger(root) {
  let held = local.get(root);
  if (held === undefined) {
    const ledger = new Ledger();
    held = { ledger, loaded: scanRoot(root).then((found) => ledger.load(found)) };
    local.set(root, held);
    held.loaded.catch(() => local.delete(root));
  }
  await held.loaded;
  return held.ledger;
}

/**
 * Runs ledger operation `op` (`reserve`, `release`, `touch`, `forget`,
 * `usage`) on `root`'s ledger in this thread: what the main thread of a
 * threaded proxy answers its workers with.
 */
export async function ledgerCall(op, root, args) {
  const ledger = await localLedger(root);
  switch (op) {
    case 'reserve': return ledger.reserve(args);
    case 'release': return ledger.release(args);
    case 'touch': return ledger.touch(args);
    case 'counts': return ledger.counts(args);
    case 'forget': return ledger.forget(args.session);
    case 'usage': return ledger.usage();
    default: throw new TypeError(`unknown ledger operation ${op}`);
  }
}

/**
 * The ledger a FileStore of `root` uses: the main thread's when this is a
 * worker thread of a threaded proxy (`globalThis[REMOTE_LEDGER]`), else this
 * thread's. `call(op, args)` resolves what `ledgerCall` does.
 */
export function ledgerFor(root) {
  const remote = globalThis[REMOTE_LEDGER];
  if (typeof remote === 'function') return { call: (op, args) => remote(op, root, args) };
  return { call: (op, args) => ledgerCall(op, root, args) };
}
