import assert from 'node:assert/strict';
import { chmodSync, constants, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { accessProblem, type MayAccess } from '../../../src/store/sqlite/access.js';
import { tempDir } from '../../helpers.js';

/** SQLite's error for a store whose folder it may not write (better-sqlite3 puts the code on it). */
function sqliteError(code: string): Error {
  return Object.assign(new Error('attempt to write a readonly database'), { code });
}

/** Permissions as a test wants them, whoever runs it (root may write anywhere): `denied` paths refuse `mode`s that write. */
function refusing(...denied: string[]): MayAccess {
  return (path, mode) => !(denied.includes(path) && (mode & constants.W_OK) !== 0);
}

const USER = `${userInfo().username} (uid ${process.getuid!()})`;
const NAME = userInfo().username;

describe('accessProblem: a store refused for a permission names the folder or file and the user', () => {
  const dir = tempDir(after);
  const folder = join(dir, 'data');
  mkdirSync(folder);
  chmodSync(folder, 0o755);
  const path = join(folder, 'plant-store.db');
  const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

  it('SQLITE_READONLY_DIRECTORY: the folder, the user who needs to write it, its owner and mode, and the chown that mends it', () => {
    const message = accessProblem(path, sqliteError('SQLITE_READONLY_DIRECTORY'), refusing(folder));
    assert.equal(
      message,
      `the folder ${folder} is not writable by the user ${USER} that runs plant-store (it is uid ${statSync(folder).uid}'s, mode 755), ` +
        `and SQLite writes beside the database (plant-store.db-wal, plant-store.db-shm). Give the folder to that user: chown ${NAME} ${folder}`,
    );
  });

  it('a store file (or its -wal or -shm) the user may not read and write: that file, each of them, with the folder in the same message', () => {
    writeFileSync(path, '');
    chmodSync(path, 0o600);
    writeFileSync(`${path}-wal`, '');
    const message = accessProblem(path, sqliteError('SQLITE_CANTOPEN'), refusing(folder, path, `${path}-wal`));
    const parts = message?.split('; ') ?? [];
    assert.equal(parts.length, 3, message);
    assert.match(parts[0]!, new RegExp(`^the folder ${folder} is not writable`));
    assert.equal(
      parts[1],
      `the file ${path} is not readable and writable by the user ${USER} that runs plant-store (it is uid ${statSync(path).uid}'s, mode 600). ` +
        `Give it to that user: chown ${NAME} ${path}`,
    );
    assert.match(parts[2]!, new RegExp(`^the file ${path}-wal is not readable and writable by the user .* mode ${mode(`${path}-wal`)}\\)`));
  });

  it("a folder that does not exist and cannot be made: the nearest folder there is, and the commands that make the store's", () => {
    const deep = join(folder, 'a', 'b', 'plant-store.db');
    const error = Object.assign(new Error(`EACCES: permission denied, mkdir '${join(folder, 'a')}'`), { code: 'EACCES' });
    assert.equal(
      accessProblem(deep, error, refusing(folder)),
      `cannot make the folder ${join(folder, 'a', 'b')}: ${folder} is not writable by the user ${USER} that runs plant-store ` +
        `(it is uid ${statSync(folder).uid}'s, mode 755). Make the folder and give it to that user: ` +
        `mkdir -p ${join(folder, 'a', 'b')} && chown ${NAME} ${join(folder, 'a', 'b')}`,
    );
  });

  it('nothing to say for another error, or when every permission is there (the error is then said as it is)', () => {
    assert.equal(accessProblem(path, sqliteError('SQLITE_CORRUPT'), refusing(folder)), undefined);
    assert.equal(accessProblem(path, new Error('no code'), refusing(folder)), undefined);
    assert.equal(accessProblem(path, undefined, refusing(folder)), undefined);
    assert.equal(accessProblem(path, sqliteError('SQLITE_READONLY_DIRECTORY'), refusing()), undefined);
  });
});
