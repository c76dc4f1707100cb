import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

// A real forward proxy on this machine, as a corporate network has one: it opens CONNECT tunnels (node:http's
// 'connect' event, piped with node:net) and records what went through it: the target of each tunnel and its
// Proxy-Authorization header. It can refuse every tunnel with a status (a proxy that says no) or ask for credentials.

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** host:port of every CONNECT, in arrival order. */
  tunnels: string[];
  /** The Proxy-Authorization header of every CONNECT ('' when none). */
  authorizations: string[];
  /** Plain (non-CONNECT) requests that reached the proxy: none expected. */
  plainRequests: string[];
  /** TCP connections the proxy accepted, whatever came over them. */
  connections(): number;
  close(): Promise<void>;
}

export interface ConnectProxyOptions {
  /** Answer every CONNECT with this status instead of opening the tunnel. */
  refuseWith?: number;
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  const authorizations: string[] = [];
  const plainRequests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    plainRequests.push(`${request.method ?? ''} ${request.url ?? ''}`);
    response.writeHead(405).end();
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    tunnels.push(request.url ?? '');
    authorizations.push(String(request.headers['proxy-authorization'] ?? ''));
    if (options.refuseWith !== undefined) {
      client.end(`HTTP/1.1 ${options.refuseWith} Refused by the test proxy\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const [host = '', port = '80'] = (request.url ?? '').split(/:(?=\d+$)/);
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    authorizations,
    plainRequests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
