// Test support: spill stores outside wasm.

/**
 * A store outside wasm over a Map (`data`, keyed `<session>/<key>`) with the
 * `get`/`put` interface; with `listing`, also `list` and `delete`, as
 * KvSpillStore and the Durable Object store have.
 */
export function mapStore({ listing = false } = {}) {
  const data = new Map();
  const store = {
    data,
    async get(session, key) {
      if (!data.has(`${session}/${key}`)) throw new Error(`missing ${session}/${key}`);
      return data.get(`${session}/${key}`);
    },
    async put(session, key, text) {
      data.set(`${session}/${key}`, text);
    },
  };
  if (!listing) return store;
  return {
    ...store,
    async list(session) {
      const prefix = `${session}/`;
      return [...data.keys()].filter((k) => k.startsWith(prefix)).map((k) => ({ key: k.slice(prefix.length), bytes: data.get(k).length, lines: 1 }));
    },
    async delete(session, key) {
      data.delete(`${session}/${key}`);
    },
  };
}
