import { startSandbox, type SandboxOptions } from '../../src/sandbox/index.js';

// The sandbox of a soak cell (and of the e2e cut-over tests), in its own process (forked with an IPC channel): it
// prints nothing, sends its URL once listening, answers `dump` with what it holds for ACME and `settle` by finishing
// every process now.

const options = JSON.parse(process.argv[2] ?? '{}') as Partial<SandboxOptions>;
const sandbox = await startSandbox(options);
const send = (message: unknown): void => void process.send?.(message);

process.on('message', (message: { type: string }) => {
  if (message.type === 'dump') {
    const accounts = sandbox.inspect.accounts('ACME').map((account) => ({
      number: account.externalAccountNumber,
      status: account.status,
      creates: account.createRequestsAccepted,
      payload: account.payload,
      notes: account.notes.filter((note) => !note.bySandbox).map((note) => note.body ?? ''),
      transactions: account.transactions.map((transaction) => transaction.transactionId),
      statements: account.historicalStatements.map((statement) => String(statement['statement_id'])),
      paymentInstructions: account.paymentInstructions.map((instruction) => instruction.reference),
    }));
    send({ type: 'dump', accounts });
  } else if (message.type === 'settle') {
    send({ type: 'settled', count: sandbox.control.settleAll() });
  } else if (message.type === 'close') {
    void sandbox.close().then(() => process.exit(0));
  }
});
send({ type: 'ready', url: sandbox.url, apiKey: sandbox.apiKey });
