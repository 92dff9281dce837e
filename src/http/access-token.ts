/**
 * Said of an `access_token` query parameter sent to an operation that takes the token in the Authorization
 * header only: the 401 when no header came with it (auth.ts), the 400 of the unknown parameter when one did
 * (validation-messages.ts). Only GET /events takes it, for a browser's EventSource.
 */
export const ACCESS_TOKEN_NOT_TAKEN =
  'only GET /events takes the token as access_token in the query string (for EventSource); send Authorization: Bearer <token>';
