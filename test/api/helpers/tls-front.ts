import { readFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';

// An https front for a local http service (the sandbox): it ends TLS with the tests' own certificate
// (test/e2e/tls/, signed by a test authority no machine trusts) and pipes each connection to the service. It counts
// the handshakes that succeeded and those the client broke off (an untrusted certificate).

export const TLS_DIR = join(import.meta.dirname, '..', '..', 'e2e', 'tls');
export const TEST_CA = join(TLS_DIR, 'ca.pem');

export interface TlsFront {
  /** `https://127.0.0.1:PORT`. */
  url: string;
  handshakes: number;
  failedHandshakes: number;
  close(): Promise<void>;
}

export async function startTlsFront(target: string): Promise<TlsFront> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const front = { handshakes: 0, failedHandshakes: 0 };
  const server = createServer(
    { key: readFileSync(join(TLS_DIR, 'server-key.pem')), cert: readFileSync(join(TLS_DIR, 'server-cert.pem')) },
    (client: TLSSocket) => {
      front.handshakes += 1;
      const upstream = connect(Number(port), hostname, () => {
        client.pipe(upstream);
        upstream.pipe(client);
      });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    },
  );
  server.on('tlsClientError', () => (front.failedHandshakes += 1));
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return Object.assign(front, {
    url: `https://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
