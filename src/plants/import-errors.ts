/** A row that is not a valid NewPlant, or a body that is not rows: says where (`line 17`, `element 16`) and what. */
export class ImportRowError extends Error {
  constructor(message: string) {
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
