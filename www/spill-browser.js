// The spill browser: list the blobs of the current run, read them a page of
// lines at a time from any offset, grep one blob or all of them.

const $ = (id) => document.getElementById(id);

export class SpillBrowser {
  #engine;
  #page = { offset: 0, totalLines: 0, nextOffset: null };

  constructor(engine) {
    this.#engine = engine;
    $('spill-list').addEventListener('change', () => this.read(0));
    $('spill-read-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.read(Math.max(0, Number($('spill-offset').value) - 1));
    });
    $('spill-prev').addEventListener('click', () => this.read(Math.max(0, this.#page.offset - this.#limit())));
    $('spill-next').addEventListener('click', () => {
      if (this.#page.nextOffset !== null) this.read(this.#page.nextOffset);
    });
    $('spill-grep-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.grep();
    });
  }

  #limit() {
    const n = Number($('spill-limit').value);
    return Number.isInteger(n) && n > 0 ? Math.min(n, 2000) : 200;
  }

  /** Refreshes the list after a run. */
  async refresh() {
    const { session, spills } = await this.#engine.spills();
    const list = $('spill-list');
    const selected = list.value;
    list.replaceChildren(...spills.map((s) => {
      const o = document.createElement('option');
      o.value = s.key;
      o.textContent = `${s.key} · ${s.lines.toLocaleString('en-US')} lines · ${(s.bytes / 1024).toFixed(1)} KB`;
      return o;
    }));
    $('spill-session').textContent = spills.length
      ? `${spills.length} blob${spills.length === 1 ? '' : 's'} in session “${session}”. Every pointer spill://${session}/<key> in the prompt opens here.`
      : `Nothing spilled in session “${session}” (no stage removed text with these settings).`;
    if (spills.some((s) => s.key === selected)) list.value = selected;
    else {
      $('spill-text').textContent = '';
      $('spill-read-info').textContent = '';
    }
    $('spill-matches').replaceChildren();
    $('spill-grep-info').textContent = '';
  }

  /** Shows lines from `offset` (0-based) of the selected blob. */
  async read(offset) {
    const key = $('spill-list').value;
    if (!key) return;
    let page;
    try {
      page = await this.#engine.read(key, offset, this.#limit());
    } catch (err) {
      $('spill-read-info').textContent = `Read failed: ${err.message}`;
      return;
    }
    this.#page = page;
    $('spill-offset').value = String(page.offset + 1);
    const lines = page.count ? page.text.split('\n') : [];
    const width = String(page.offset + lines.length).length;
    $('spill-text').textContent = lines
      .map((line, i) => `${String(page.offset + i + 1).padStart(width)}  ${line}`)
      .join('\n');
    $('spill-read-info').textContent =
      `${key}: lines ${page.offset + 1}–${page.offset + page.count} of ${page.totalLines.toLocaleString('en-US')} ` +
      `(${page.bytes.toLocaleString('en-US')} bytes)${page.nextOffset === null ? ' · end' : ''} — ` +
      `the agent reads this page with read_spill offset=${page.offset} limit=${page.limit}`;
  }

  /** Opens a `spill://session/key` pointer. */
  async open(pointer) {
    const key = pointer.split('/').at(-1);
    const list = $('spill-list');
    if (![...list.options].some((o) => o.value === key)) {
      $('spill-read-info').textContent = `${pointer} is not in this run's store.`;
      return;
    }
    list.value = key;
    await this.read(0);
    $('spills').scrollIntoView({ block: 'start' });
    $('spill-text').focus();
  }

  /** Runs the grep form. */
  async grep() {
    let pattern = $('spill-pattern').value;
    let regex = $('spill-regex').checked;
    const m = /^\/(.+)\/$/.exec(pattern);
    if (m) {
      pattern = m[1];
      regex = true;
    }
    const key = $('spill-all').checked ? '' : $('spill-list').value;
    const out = $('spill-matches');
    out.replaceChildren();
    if (!pattern) {
      $('spill-grep-info').textContent = 'Enter a pattern.';
      return;
    }
    let found;
    try {
      found = await this.#engine.grep(key, pattern, { regex, ignoreCase: $('spill-icase').checked });
    } catch (err) {
      $('spill-grep-info').textContent = `Grep failed: ${err.message}`;
      return;
    }
    $('spill-grep-info').textContent =
      `${found.total} matching line${found.total === 1 ? '' : 's'}${found.truncated ? `, first ${found.matches.length} shown` : ''}` +
      (found.copies ? ` (each listed once: ${found.copies} more cop${found.copies === 1 ? 'y' : 'ies'} in other blobs)` : '');
    const place = ({ key, line }) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'link';
      b.textContent = `${key}:${line}`;
      b.addEventListener('click', async () => {
        $('spill-list').value = key;
        await this.read(Math.max(0, line - 1));
      });
      return b;
    };
    out.replaceChildren(...found.matches.map((hit) => {
      const li = document.createElement('li');
      const code = document.createElement('code');
      code.textContent = hit.text;
      li.append(place(hit), ' ', code);
      if (hit.also?.length) {
        const also = document.createElement('span');
        also.className = 'also muted';
        also.append(' also in ', ...hit.also.flatMap((p, i) => (i ? [', ', place(p)] : [place(p)])));
        li.append(also);
      }
      return li;
    }));
  }
}
