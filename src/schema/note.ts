import { z } from 'zod';
import { datetime, documentPath } from './primitives.js';

/** Spec "Note". At least one of body or document_paths: a cross-field rule (rules.ts). */
export const noteSchema = z.strictObject({
  body: z.string().min(1).max(10_000).optional(),
  document_paths: z.array(z.strictObject({ document_path: documentPath })).optional(),
  created_at: datetime.optional(),
  is_pinned: z.boolean().optional(),
  unpin_at: datetime.optional(),
});

export type Note = z.infer<typeof noteSchema>;
