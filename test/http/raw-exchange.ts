import { connect } from 'node:net';

/** An answer read from a raw socket: its status, its head (status line and headers) and its body. */
export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/**
 * Sends `text` as it is on a new connection to the port, and reads until the server closes it (send
 * `Connection: close`, or something the server answers by closing): for requests no HTTP client sends.
 */
export async function rawExchange(port: number, text: string): Promise<RawAnswer> {
  const answer = await rawBytes(port, text);
  const end = answer.indexOf('\r\n\r\n');
  const head = end === -1 ? answer : answer.slice(0, end);
  return { status: Number(head.split(' ')[1]), head, body: end === -1 ? '' : answer.slice(end + 4) };
}

/** Sends `text` as it is on a new connection to the port; all that came back (UTF-8) once the server closed it. */
export function rawBytes(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(text);
  });
}

/** The port an app listens on (after app.listen). */
export function portOf(server: { address(): unknown }): number {
  return (server.address() as { port: number }).port;
}
