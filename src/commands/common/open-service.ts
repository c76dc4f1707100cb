import { randomBytes } from 'node:crypto';
import { createImportServiceClient, type ClientOptions, type ServiceClient } from '../../api/index.js';
import {
  loadServiceConfig,
  serviceClientOptions,
  type ServiceConfig,
  type ServiceFileSettings,
  type ServiceFlags,
} from '../../config/service.js';
import { startSandbox, type SandboxOptions } from '../../sandbox/index.js';
import type { Dialect } from '../../schema/index.js';

// The wiring every command that talks to the service shares, written once: flags + environment
// (+ the mapping file's dialect settings, + the state directory's recorded dialect) -> ServiceConfig
// -> client, or the built-in sandbox in the same dialect when --sandbox is given. Warnings (a key
// file others can read) go to stderr here. The built-in sandbox gets a random key of its own, never the published
// default (docs/sandbox.md): another process on this machine cannot take a token from it, nor read through its
// inspection endpoint the payloads the run sends.

export interface OpenServiceInput {
  flags: ServiceFlags;
  /** Start the built-in sandbox with these options (its dialect is the run's) and use it. */
  sandbox?: Partial<SandboxOptions> | undefined;
  file?: ServiceFileSettings | undefined;
  /** The dialect the command's resolved configuration chose. */
  dialect: Dialect;
  /** The service's settings as the command loaded them already (warnings said): used as they are, not loaded again. */
  config?: ServiceConfig | undefined;
  /** Pace and other per-command client options (concurrency, rate, events). */
  client?: Omit<ClientOptions, 'baseUrl' | 'credentials'>;
  /** What the command can do without a service URL (loadServiceConfig's message). */
  withoutUrl?: string;
}

export interface OpenService {
  client: ServiceClient;
  config: ServiceConfig;
  /** Closes the client, then the sandbox if one was started. */
  close: () => Promise<void>;
}

export async function openService(input: OpenServiceInput): Promise<OpenService> {
  const env = process.env;
  const cwd = process.cwd();
  // Resolved without the sandbox first: the sandbox must speak the dialect the client will.
  const sandbox = input.sandbox
    ? await startSandbox({
        ...input.sandbox,
        apiKey: randomBytes(32).toString('base64url'),
        dialect: input.dialect,
        ...(input.file?.contract ? { contract: input.file.contract } : {}),
      })
    : undefined;
  // The run's first line said "the built-in sandbox"; where it listens is known now.
  if (sandbox) process.stderr.write(`migrate: the built-in sandbox listens on ${sandbox.url}, with a key of its own\n`);
  try {
    const config =
      sandbox === undefined && input.config !== undefined
        ? input.config
        : await loadServiceConfig({
            flags: input.flags,
            env,
            cwd,
            file: input.file,
            dialect: input.dialect,
            withoutUrl: input.withoutUrl,
            sandbox: sandbox ? { url: sandbox.url, apiKey: sandbox.apiKey } : undefined,
          });
    const client = createImportServiceClient(serviceClientOptions(config, input.client));
    return {
      client,
      config,
      close: async () => {
        await client.close();
        await sandbox?.close();
      },
    };
  } catch (error) {
    await sandbox?.close();
    throw error;
  }
}
