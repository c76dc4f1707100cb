// Loaded into every command the tour test runs (NODE_OPTIONS=--import): the process's wall clock (Date.now, new
// Date()) starts at SAMPLE_MONTH_NOW and goes on at the pace of time. The sample export's records are dated in
// November 2026 and the sandbox's open statement period starts on the first day of the current month, so the tour's
// push prints what it shows on a day of that month only; at this instant it does, whatever the machine's date. The
// machine's own clock is never touched.

const start = Date.parse(process.env.SAMPLE_MONTH_NOW ?? '2026-11-23T12:00:00Z');
const RealDate = globalThis.Date;
const offset = start - RealDate.now();

class SampleMonthDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }

  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = SampleMonthDate;
