// Loaded into the binary with --import by test/e2e/wall-clock.test.ts: the process's wall clock (Date.now, new Date())
// steps by WALL_CLOCK_STEP_MS when the process gets SIGUSR2, as an NTP step of the machine's clock would, while the
// monotonic clock (performance.now) goes on. The test sends the signal on an event (the service has a create), so no
// test waits on the wall clock, and the machine's own clock is never touched.

const step = Number(process.env.WALL_CLOCK_STEP_MS ?? 0);
const RealDate = globalThis.Date;
const realNow = RealDate.now.bind(RealDate);
let offset = 0;
process.on('SIGUSR2', () => {
  offset = step;
});

class SteppedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + offset);
    else super(...args);
  }

  static now() {
    return realNow() + offset;
  }
}
globalThis.Date = SteppedDate;
