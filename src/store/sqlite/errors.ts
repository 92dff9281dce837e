import { StoreUnavailableError } from '../store.js';

/** Result codes that mean the database cannot be used right now, as opposed to a bug in a query. */
const UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|BUSY|LOCKED|CANTOPEN|NOMEM|PROTOCOL|CORRUPT|NOTADB)/;

/** An error thrown by better-sqlite3, classified: only an error with an "unavailable" code is an outage. */
export interface ClassifiedError {
  unavailable: boolean;
  code: string | undefined;
  message: string;
}

export function classifySqliteError(error: unknown): ClassifiedError {
  const code = (error as { code?: unknown } | null)?.code;
  const text = typeof code === 'string' ? code : undefined;
  return {
    unavailable: text !== undefined && UNAVAILABLE.test(text),
    code: text,
    message: error instanceof Error ? error.message : String(error),
  };
}

/** A better-sqlite3 error as the store reports it: an outage becomes StoreUnavailableError (a 503), anything else stays a bug. */
export function translate(error: unknown): Error {
  const classified = classifySqliteError(error);
  if (classified.unavailable) return new StoreUnavailableError(`SQLite: ${classified.code}`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

/** Runs a read, its errors translated. */
export function guardSync<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw translate(error);
  }
}

/** Runs a read on the main thread's connection, as a promise like every store call. */
export function guard<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(translate(error));
  }
}
