// Test support: a real redis-server of the test's own (a child process on a
// free loopback port, its files in a temporary directory, no system service).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';

/** Why the Redis tests are skipped here, else `undefined` (redis-server is on PATH). */
export const REDIS_MISSING = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0
  ? undefined
  : 'redis-server is not installed (apt-get install redis-server: .ci/setup installs it)';

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts redis-server on a free port of 127.0.0.1, its files in `dir` (a new
 * temporary one by default). `persist`: append-only file on (`appendfsync
 * always`), else no persistence at all. Resolves `{ port, url, dir, stop(),
 * kill(), restart() }` once it answers PING: `kill()` ends it at once
 * (SIGKILL: what a crash looks like), `restart()` starts it again on the
 * same port and directory.
 */
export async function startRedis({ persist = false, dir = mkdtempSync(join(tmpdir(), 'tracelite-redis-')), port } = {}) {
  port ??= await freePort();
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no',
    '--appendonly', persist ? 'yes' : 'no', '--appendfsync', 'always', '--protected-mode', 'no', '--loglevel', 'warning',
  ];
  let child;
  const url = `redis://127.0.0.1:${port}`;
  const start = async () => {
    child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.exited = exited;
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      if (await pings(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('redis-server did not answer within 5 s');
  };
  await start();
  const end = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await child.exited;
  };
  return {
    port,
    url,
    dir,
    kill: () => end('SIGKILL'),
    restart: start,
    stop: async () => {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis on `port` answers PING. */
async function pings(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      reply += d;
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
  });
}

/** A connected node-redis client for `url` (the caller closes it). */
export async function redisClient(url) {
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => {});
  await client.connect();
  return client;
}
