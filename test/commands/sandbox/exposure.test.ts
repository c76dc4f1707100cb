import { describe, expect, it } from 'vitest';
import { checkSandboxReach } from '../../../src/commands/sandbox/exposure.js';
import { DEFAULT_API_KEY } from '../../../src/sandbox/index.js';

// Who may reach `migrate sandbox` (docs/sandbox.md "Beyond this machine"): a loopback address as before; any other
// only with a key of the operator's own and --public.
const LOOPBACK = [
  '127.0.0.1',
  '127.8.9.10',
  'localhost',
  'LOCALHOST',
  'a.localhost',
  '::1',
  '[::1]',
  '::ffff:127.0.0.1',
];
const BEYOND = ['0.0.0.0', '::', '192.168.1.5', '10.0.0.1', 'build-host.example', '127.0.0.1.example', '0x7f000001'];

describe('the sandbox on a --host', () => {
  it('a loopback address starts with the default key and without --public, saying nothing more', () => {
    for (const host of LOOPBACK)
      expect(checkSandboxReach({ host, apiKey: undefined, public: false }), host).toBe(undefined);
  });

  it('any other address with the published key is refused (exit 2) naming how to give a key of your own, --public or not', () => {
    for (const host of BEYOND)
      for (const apiKey of [undefined, DEFAULT_API_KEY]) {
        const refusal = (): unknown => checkSandboxReach({ host, apiKey, public: true });
        expect(refusal, host).toThrow(/--api-key-file FILE, or set MIGRATE_API_KEY/);
        expect(refusal, host).toThrow(expect.objectContaining({ exitCode: 2, code: 'sandbox_public_default_key' }));
      }
  });

  it('any other address with a key of its own needs --public; then it says who reaches it and what the inspector gives', () => {
    for (const host of BEYOND) {
      const refusal = (): unknown => checkSandboxReach({ host, apiKey: 'own-key', public: false });
      expect(refusal, host).toThrow(expect.objectContaining({ exitCode: 2, code: 'sandbox_public_not_asked' }));
      expect(refusal, host).toThrow(/every payload sent to it: names, dates of birth/);
      const said = checkSandboxReach({ host, apiKey: 'own-key', public: true });
      expect(said, host).toContain('Public (--public)');
      expect(said, host).toContain('/_sandbox/accounts/SUPPLIER/');
    }
    expect(checkSandboxReach({ host: '192.168.1.5', apiKey: 'k', public: true })).toContain(
      'every machine that can reach 192.168.1.5',
    );
  });
});
