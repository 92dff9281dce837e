/**
 * A row that is not a valid NewPlant, or a body that is not rows: says where (`line 17`, `element 16`) and
 * what. Its code: `unknown_field` for a strict import's row with a field it does not know, else `invalid_import`.
 */
export class ImportRowError extends Error {
  constructor(
    message: string,
    readonly code: 'invalid_import' | 'unknown_field' = 'invalid_import',
  ) {
    super(message);
    this.name = 'ImportRowError';
  }
}

/** The body grew past the import's limit. */
export class ImportTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the import is larger than the limit of ${limit} bytes (IMPORT_BODY_LIMIT)`);
    this.name = 'ImportTooLargeError';
  }
}

/** The refusal of a row (a line, an array element) longer than IMPORT_MAX_ROW_BYTES. */
export function rowTooLong(where: string, maxRowBytes: number): ImportRowError {
  return new ImportRowError(`${where}: longer than the limit of ${maxRowBytes} bytes for one row (IMPORT_MAX_ROW_BYTES)`);
}
