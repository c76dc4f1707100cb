import { describe, expect, it } from 'vitest';
import { holdsPassword, shownUrl } from '../src/shown-url.js';

describe('shownUrl', () => {
  it('service form: no user information, query or fragment, however the URL is written', () => {
    expect(shownUrl('https://api.example.energy/v1')).toBe('https://api.example.energy/v1');
    expect(shownUrl('https://u:p@api.example.energy/v1?key=k#f')).toBe('https://…@api.example.energy/v1?…');
    expect(shownUrl('https://KEY@api.example.energy')).toBe('https://…@api.example.energy');
    // No scheme: the URL parser reads `user:` as one and the rest as a path.
    expect(shownUrl('user:secret@host.example')).toBe('…@host.example');
    // A password the parser cannot read: cut at the last @ all the same.
    expect(shownUrl('https://u:p/a#s@s@host/x?q')).toBe('https://…@host/x?…');
    expect(shownUrl('not a url')).toBe('not a url');
    expect(shownUrl('https://host/a\nforged line')).toBe('https://host/aforged%20line');
  });

  it('ledger form: the user name and connection parameters kept, every password ***', () => {
    expect(shownUrl('postgres://u:s3cr%40t@h:5432/db?sslmode=require', 'ledger')).toBe(
      'postgres://u:***@h:5432/db?sslmode=require',
    );
    expect(shownUrl('postgres://u:p@ss@h/db', 'ledger')).toBe('postgres://u:***@h/db');
    expect(shownUrl('postgresql://u@h/db?sslpassword=a&password=b&sslmode=verify-full', 'ledger')).toBe(
      'postgresql://u@h/db?sslpassword=***&password=***&sslmode=verify-full',
    );
    expect(shownUrl('postgresql://postgres@/db?host=/run/pg', 'ledger')).toBe('postgresql://postgres@/db?host=/run/pg');
    expect(holdsPassword('postgresql://postgres@/db?host=/run/pg')).toBe(false);
    expect(holdsPassword('postgresql://u:@h/db')).toBe(true);
  });
});
