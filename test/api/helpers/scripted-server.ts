import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A local HTTP server whose every answer the test scripts, and which records what it received
// (headers included: this is the test's own server). For what the sandbox cannot do on demand:
// malformed bodies, hangs, a connection reset after the request has arrived.

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Script = (request: ReceivedRequest, response: ServerResponse, socket: Socket) => void;

export interface ScriptedServer {
  url: string;
  received: ReceivedRequest[];
  /** Requests to REST paths (the token mutation excluded). */
  rest(): ReceivedRequest[];
  close(): Promise<void>;
}

export function json(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(body === undefined ? '' : JSON.stringify(body));
}

export function tokenFor(seq: number, ttlSeconds = 3600): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'HS256' })}.${part({ iat: now, exp: now + ttlSeconds, n: seq })}.sig-${seq}`;
}

/** Answers the token mutation with numbered tokens (or `options.token`'s), and everything else with `script`. */
export async function startScriptedServer(
  script: Script,
  options: { token?: (seq: number) => string } = {},
): Promise<ScriptedServer> {
  const received: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let tokens = 0;
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      if (request.url === '/v1/graphql/') {
        tokens += 1;
        const now = Math.floor(Date.now() / 1000);
        json(response, 200, {
          data: {
            obtainKrakenToken: {
              token: (options.token ?? tokenFor)(tokens),
              payload: { iat: now, exp: now + 3600 },
              refreshToken: `refresh-${tokens}-abcdef`,
              refreshExpiresIn: now + 86400,
            },
          },
        });
        return;
      }
      script(request, response, incoming.socket);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    rest: () => received.filter((request) => request.url !== '/v1/graphql/'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
