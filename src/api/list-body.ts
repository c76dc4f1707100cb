import { TokenParser, TokenType, Tokenizer } from '@streamparser/json';
import type { ParsedTokenInfo } from '@streamparser/json';
import { listItemSchema, type ListItem } from '../schema/index.js';
import { UnexpectedResponseError } from './errors.js';

// The body of a list endpoint, read as it arrives: a bare array of every import process of the supplier, no pagination,
// which the real platform's examples wrap once more (`[[{...}]]`, docs/service.md "Status and list endpoints"). Each
// entry is validated on its own (the list-item response schema) and handed on, then dropped, so memory does not grow
// with the list. A body that is not such an array is an UnexpectedResponseError naming the endpoint, as a whole body
// that does not parse or match the schema is.

/** Reads a 2xx body chunk by chunk; throws an UnexpectedResponseError for a body that is not the expected JSON. */
export interface BodyReader {
  write(chunk: Uint8Array): void;
  /** The body is complete. */
  end(): void;
}

/**
 * Hands each valid entry of the list body to `add`, in order; entries of a wrapped list are numbered as if flattened.
 */
export function listBodyReader(
  endpoint: string,
  status: number,
  add: (item: ListItem) => void,
  path?: string,
): BodyReader {
  // Named with the request's path; no excerpt: the body is read as it arrives and not kept.
  const unexpected = (detail: string, field?: string): UnexpectedResponseError =>
    new UnexpectedResponseError(endpoint, status, detail, field, path === undefined ? undefined : { path });
  const tokenizer = new Tokenizer();
  let parser: TokenParser | undefined;
  /** Containers open before the current token: 1 inside the outer array. */
  let depth = 0;
  let wrapped: boolean | undefined;
  let index = 0;
  /** Thrown by `add`: not the body's fault, passed on as it is. */
  let callerError: unknown;

  const take = (value: unknown): void => {
    const parsed = listItemSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = [String(index), ...(issue?.path.map(String) ?? [])].join('.');
      throw unexpected(issue?.message ?? 'does not match the spec', path);
    }
    index += 1;
    try {
      add(parsed.data);
    } catch (error) {
      callerError = error;
      throw error;
    }
  };

  /** The parser emits the entries, bare (`$.*`) or wrapped (`$.*.*`), each removed from its array once emitted. */
  const open = (nested: boolean): TokenParser => {
    wrapped = nested;
    const created = new TokenParser({ paths: [nested ? '$.*.*' : '$.*'], keepStack: false });
    created.onValue = ({ value }) => take(value);
    created.write({ token: TokenType.LEFT_BRACKET, value: '[' });
    return created;
  };

  tokenizer.onToken = (token: ParsedTokenInfo) => {
    const starts = token.token === TokenType.LEFT_BRACE || token.token === TokenType.LEFT_BRACKET;
    const closes = token.token === TokenType.RIGHT_BRACE || token.token === TokenType.RIGHT_BRACKET;
    if (depth === 0 && parser === undefined) {
      if (token.token !== TokenType.LEFT_BRACKET) throw unexpected('the list is not a JSON array', '');
      depth = 1;
      return; // the outer array's "[": fed once its first element tells the form
    }
    if (depth === 1 && token.token !== TokenType.COMMA && token.token !== TokenType.RIGHT_BRACKET) {
      const nested = token.token === TokenType.LEFT_BRACKET;
      parser ??= open(nested);
      if (nested !== wrapped) throw unexpected('mixes wrapped and bare entries', String(index));
    }
    parser ??= open(false); // `[]`
    if (starts) depth += 1;
    if (closes) depth -= 1;
    parser.write(token);
  };

  const guard = (step: () => void): void => {
    try {
      step();
    } catch (error) {
      if (error instanceof UnexpectedResponseError || error === callerError) throw error;
      throw unexpected('the body is not JSON', '');
    }
  };

  return {
    write: (chunk) => guard(() => tokenizer.write(chunk)),
    end: () =>
      guard(() => {
        tokenizer.end();
        if (parser?.isEnded !== true) throw unexpected('the body is not JSON', '');
      }),
  };
}
