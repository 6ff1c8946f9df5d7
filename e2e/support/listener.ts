// Another web server on the same host name, another port: what a neighbour's service (or another user's
// process on a shared host) sees of the operator's browser. It keeps every request and serves one page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

export class PortListener {
  readonly received: Received[] = [];
  private readonly server: http.Server;

  private constructor(page: string) {
    this.server = http.createServer((req, res) => {
      this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(page);
    });
  }

  /** Listens on 127.0.0.1 (a free port) and answers every request with `page`. */
  static async start(page: string): Promise<PortListener> {
    const listener = new PortListener(page);
    await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
    return listener;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Everything the browser sent here, headers included, as one text to search. */
  transcript(): string {
    return JSON.stringify(this.received);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
