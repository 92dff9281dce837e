import { createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * Stand-ins for PostgreSQL hosts on loopback ports, speaking just enough of the protocol (version 3) for a
 * connection attempt, so that every way an attempt fails can be had in-process, without a cluster:
 * - `wrong-password` asks for the password in clear text, notes what it was sent, and refuses it (28P01);
 * - `standby` asks for the password the same way, takes it, and answers the role query as a hot standby;
 * - `silent` takes the connection and never says a word;
 * - `full` refuses the startup as a server at max_connections does (53300).
 */
export type FakeKind = 'wrong-password' | 'standby' | 'silent' | 'full';

export interface FakePostgres {
  port: number;
  /** Every password a client sent, as received. */
  passwords: string[];
  close(): Promise<void>;
}

/** A typed backend message: its type byte, its length, its body. */
function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function int32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(value);
  return b;
}

function int16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(value);
  return b;
}

const cstring = (text: string) => Buffer.from(`${text}\0`);

const ASK_CLEARTEXT_PASSWORD = message('R', int32(3));
const AUTHENTICATION_OK = message('R', int32(0));
const READY = message('Z', Buffer.from('I'));
const WRONG_PASSWORD = message(
  'E',
  Buffer.from('SFATAL\0VFATAL\0C28P01\0'),
  cstring('Mpassword authentication failed for user "plants"'),
  Buffer.from('\0'),
);

const TOO_MANY_CLIENTS = message('E', Buffer.from('SFATAL\0VFATAL\0C53300\0'), cstring('Msorry, too many clients already'), Buffer.from('\0'));

/** The answer to the role query (hosts.ts): in recovery and read-only, as a hot standby answers. */
function standbyRole(): Buffer {
  const column = (name: string) => Buffer.concat([cstring(name), int32(0), int16(0), int32(16 /* bool */), int16(1), int32(-1), int16(0)]);
  const yes = Buffer.concat([int32(1), Buffer.from('t')]);
  return Buffer.concat([
    message('T', int16(2), column('in_recovery'), column('read_only')),
    message('D', int16(2), yes, yes),
    message('C', cstring('SELECT 1')),
    READY,
  ]);
}

/** Reads the client's messages: the untyped startup message first (after an SSL request, if any), then typed ones. */
function serve(socket: Socket, kind: FakeKind, passwords: string[]): void {
  let buffered = Buffer.alloc(0);
  let started = false;
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const typed = started ? 1 : 0;
      if (buffered.length < typed + 4) return;
      const length = buffered.readInt32BE(typed);
      if (buffered.length < typed + length) return;
      const type = started ? String.fromCharCode(buffered[0]!) : '';
      const body = buffered.subarray(typed + 4, typed + length);
      buffered = buffered.subarray(typed + length);
      if (kind === 'silent') continue;
      if (!started) {
        if (body.readInt32BE(0) === 80877103) {
          socket.write('N'); // SSLRequest: no SSL here
          continue;
        }
        started = true;
        if (kind === 'full') socket.end(TOO_MANY_CLIENTS);
        else socket.write(ASK_CLEARTEXT_PASSWORD);
      } else if (type === 'p') {
        passwords.push(body.subarray(0, body.indexOf(0)).toString('utf8'));
        if (kind === 'wrong-password') socket.end(WRONG_PASSWORD);
        else socket.write(Buffer.concat([AUTHENTICATION_OK, READY]));
      } else if (type === 'Q') {
        socket.write(standbyRole());
      } else if (type === 'X') {
        socket.end();
      }
    }
  });
}

export async function fakePostgres(kind: FakeKind): Promise<FakePostgres> {
  const passwords: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serve(socket, kind, passwords);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    passwords,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
