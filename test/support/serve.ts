import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '../../src/app.ts';

export type Served = { baseUrl: string; port: number; server: Server; close: () => Promise<void> };

/** Serves the app over a real socket on a free loopback port, as `npm start` does. */
export async function serve(app: App): Promise<Served> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
