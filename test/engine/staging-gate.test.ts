import { describe, expect, it } from 'vitest';
import { StagingGate } from '../../src/engine/staging-gate.js';

// Staging paced to the executor (staging-gate.ts roomAhead): it reads on while fewer than `lead`
// accounts to create wait for the executor, and is woken once the executor has taken half of them.

const settled = async (promise: Promise<void>): Promise<boolean> => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('StagingGate pacing', () => {
  it('lets staging read on below the lead, holds it at the lead, and wakes it at half the lead', async () => {
    const gate = new StagingGate(10);
    gate.advance('A-09');
    gate.readyToCreate(9);
    expect(await settled(gate.roomAhead())).toBe(true);
    gate.readyToCreate(10);
    const waiting = gate.roomAhead();
    expect(await settled(waiting)).toBe(false);
    for (let taken = 0; taken < 5; taken += 1) gate.took();
    expect(await settled(waiting)).toBe(false); // 5 still ahead: not below half the lead
    gate.took();
    expect(await settled(waiting)).toBe(true);
  });

  it('never holds staging while the gate holds, after a restart, once finished, or once the run stops', async () => {
    const held = new StagingGate(1);
    held.advance('A-1');
    held.readyToCreate(5);
    const waiting = held.roomAhead();
    held.hold(); // the executor cannot take what the gate has not passed: staging must go on
    expect(await settled(waiting)).toBe(true);
    expect(await settled(held.roomAhead())).toBe(true);

    const stopped = new StagingGate(1);
    stopped.advance('A-1');
    stopped.readyToCreate(5);
    const controller = new AbortController();
    const beforeStop = stopped.roomAhead(controller.signal);
    controller.abort();
    expect(await settled(beforeStop)).toBe(true);
    expect(await settled(stopped.roomAhead(controller.signal))).toBe(true);

    const unpaced = new StagingGate();
    unpaced.readyToCreate(1_000_000);
    expect(await settled(unpaced.roomAhead())).toBe(true);
  });
});
