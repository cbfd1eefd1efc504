// The headless Chromium the browser tests drive (Debian's, via playwright-core).

/** Its path: /usr/bin/chromium (`apt-get install -y chromium`) unless CHROMIUM_PATH says otherwise. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Its flags: no sandbox (containers), no GPU, nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
