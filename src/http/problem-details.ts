import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { quality } from './accept.js';
import { problemType, statusOf, titleOf, type ErrorCode } from './error-codes.js';

/**
 * RFC 9457 problem details: the error answer of a client that asks for application/problem+json, carrying
 * the facts of the Error shape (http/errors.ts sends either).
 */

/** RFC 9457 problem details: what an error answer is to a client that asks for application/problem+json. */
export const ProblemDetails = Type.Object(
  {
    type: Type.String({ description: 'The problem type: `tag:plant-store,2026:problem:<code>`, one per code' }),
    title: Type.String({ description: 'What the code means, the same for every answer with it' }),
    status: Type.Integer({ format: 'int32', description: 'The HTTP status' }),
    detail: Type.String({ description: "What was wrong this time: the Error shape's message" }),
    code: Type.String({ description: "The Error shape's code" }),
    field: Type.Optional(Type.String({ description: "The Error shape's field" })),
  },
  { description: 'ProblemDetails' },
);
export type ProblemDetails = Static<typeof ProblemDetails>;

export const PROBLEM_JSON = 'application/problem+json';

/** An error as problem details: its code's type and title, the status, the message as the detail, the code and field. */
export function problemDetails(code: ErrorCode, message: string, field: string | undefined): ProblemDetails {
  return { type: problemType(code), title: titleOf(code), status: statusOf(code), detail: message, code, ...(field !== undefined && { field }) };
}

/**
 * Whether the client asked for RFC 9457 problem details: its Accept names application/problem+json, and
 * likes it at least as well as application/json (`*\/*` names neither: the Error shape, as ever).
 */
export function wantsProblem(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (accept === undefined || !accept.toLowerCase().includes(PROBLEM_JSON)) return false;
  const problem = quality(accept, PROBLEM_JSON);
  return problem > 0 && problem >= quality(accept, 'application/json');
}
