import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/api/redact.js';

// The redactor finds a secret in every encoding a service or the tool may give it (src/api/secret-forms.ts), whatever
// characters the secret holds.

const KEYS = [
  'sk "live" \\ 100% +/ Zoë ключ',
  'a+b/c=d%2F',
  'tab\there "quoted"',
  'emoji-😀-key',
  'plain-key-0123456789',
];

/** The forms, computed here independently of the redactor. */
function formsOf(secret: string): Record<string, string> {
  const escaped = JSON.stringify(secret).slice(1, -1);
  return {
    raw: secret,
    json: escaped,
    'json twice': JSON.stringify(escaped).slice(1, -1),
    'json with \\/': escaped.replace(/\//g, '\\/'),
    'json ascii': escaped.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    url: encodeURIComponent(secret),
    'url lower': encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase()),
    form: encodeURIComponent(secret).replace(/%20/g, '+'),
    'url every byte': [...Buffer.from(secret)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''),
    html: secret.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
    'basic key:': `Basic ${Buffer.from(`${secret}:`).toString('base64')}`,
    'basic u:key': `Basic ${Buffer.from(`u:${secret}`).toString('base64')}`,
    'basic us:key': `Basic ${Buffer.from(`us:${secret}`).toString('base64')}`,
    base64url: Buffer.from(`user:${secret}`).toString('base64url'),
  };
}

describe('Redactor', () => {
  it.each(KEYS)('finds %j in every form, inside other text', (secret) => {
    const redactor = new Redactor();
    redactor.add(secret);
    for (const [name, form] of Object.entries(formsOf(secret))) {
      const text = `detail: "${form}" (echoed)`;
      const redacted = redactor.redact(text);
      expect(redacted, name).toContain('[REDACTED]');
      expect(redacted.includes(form), name).toBe(false);
      expect(redactor.holds(text), name).toBe(true);
    }
  });

  it('leaves text without a secret as it is, and a body without one as the same object', () => {
    const redactor = new Redactor();
    redactor.add(KEYS[0]);
    expect(redactor.redact('sk live 100 Zoe: nothing secret')).toBe('sk live 100 Zoe: nothing secret');
    const body = { status: 'PROCESSED', latest_error: { detail: 'fine' }, list: ['a', 1, null] };
    expect(redactor.redactDeep(body)).toBe(body);
    const echoed = { latest_error: { detail: `key ${KEYS[0]}` }, [`k ${KEYS[0]}`]: 1 };
    expect(JSON.stringify(redactor.redactDeep(echoed))).toBe(
      '{"latest_error":{"detail":"key [REDACTED]"},"k [REDACTED]":1}',
    );
  });

  it('short values are never secrets (they would match ordinary text); the longest secret is replaced whole', () => {
    const redactor = new Redactor();
    redactor.add('abc');
    redactor.add('token-123456');
    redactor.add('token-123456-refresh');
    expect(redactor.redact('abc token-123456-refresh token-123456')).toBe('abc [REDACTED] [REDACTED]');
  });
});
