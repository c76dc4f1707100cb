import { describe, expect, it } from 'vitest';
import {
  normaliseServiceUrl,
  refuseOtherService,
  SANDBOX_SERVICE,
  serviceDifferences,
  serviceIdentity,
} from '../../src/config/ledger-service.js';
import { UsageError } from '../../src/errors.js';

// The service a state directory is used with (docs/reruns.md), pure.

const service = (url: string, dialect = 'spec', importSupplier?: string) => ({ url, dialect, importSupplier });

describe('the service of a state directory', () => {
  it('compares base URLs without case, default port or trailing slash', () => {
    expect(normaliseServiceUrl('HTTPS://API.Example.org:443/base/')).toBe('https://api.example.org/base');
    expect(normaliseServiceUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(normaliseServiceUrl('http://127.0.0.1:8081/')).not.toBe(normaliseServiceUrl('http://127.0.0.1:8080'));
  });

  it('identifies the built-in sandbox by what it is, not by its port (a new one each run)', () => {
    expect(serviceIdentity({ sandbox: true, baseUrl: undefined, dialect: 'spec', importSupplier: 'ACME' })).toEqual({
      url: SANDBOX_SERVICE,
      dialect: 'spec',
      importSupplier: 'ACME',
    });
  });

  it.each([
    ['the same service', service('https://a.example'), service('https://a.example'), []],
    ['another URL', service('https://a.example'), service('https://b.example'), ['URL']],
    ['another dialect', service('https://a.example'), service('https://a.example', 'kraken'), ['dialect']],
    [
      'another configured supplier',
      service('https://a.example', 'spec', 'ACME'),
      service('https://a.example', 'spec', 'NORTH'),
      ['import supplier'],
    ],
    [
      'no supplier configured (records name their own)',
      service('https://a.example', 'spec', 'ACME'),
      service('https://a.example', 'spec'),
      [],
    ],
    ['a sandbox ledger pushed to a real service', service(SANDBOX_SERVICE), service('https://a.example'), ['URL']],
  ])('%s: %j', (_name, recorded, current, differences) => {
    expect(serviceDifferences(recorded, current)).toEqual(differences);
  });

  it('refuses another service with exit 2, naming both and the flag that moves the ledger on', () => {
    let thrown: unknown;
    try {
      refuseOtherService({
        ledgerLabel: '/srv/state',
        recorded: service(SANDBOX_SERVICE, 'spec', 'ACME'),
        current: service('https://a.example', 'spec', 'ACME'),
        command: 'push',
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as UsageError).exitCode).toBe(2);
    expect((thrown as Error).message).toBe(
      'the state directory /srv/state was used with the built-in sandbox (--sandbox) (spec dialect, import supplier ' +
        'ACME); this run asks for https://a.example (spec dialect, import supplier ACME). Its ledger says what that ' +
        'service holds: against another it would skip what the other never received. If it is the same platform ' +
        'under a new URL (e.g. a new URL after a DNS change), run this push again with --move-ledger-to-service: ' +
        'the ledger then records the new service. For another service, give another --state directory (this one ' +
        'belongs to the sandbox: throw it away).',
    );
    expect(() =>
      refuseOtherService({
        ledgerLabel: '/srv/state',
        recorded: service('https://a.example'),
        current: service('https://a.example'),
        command: 'status',
      }),
    ).not.toThrow();
  });
});
