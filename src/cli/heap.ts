import v8 from 'node:v8';

// The garbage collector's pace for a `migrate` process. By default V8 lets the heap grow to up to
// four times what survived its last full collection when the machine has memory to spare (its
// heap limit is a quarter of RAM, 4 GB from 16 GB up): a validate whose live data is 20-30 MB
// carried up to 130 MB of garbage, and 100,000 scattered accounts peaked at 273-300 MB RSS, at
// the 300 MB memory budget of validate (README "Performance"). Growing by half of what is live
// keeps the peak near the live data (193 MB there, 156 MB instead of 197 MB sorted) and was not
// slower: a smaller heap is collected more often but touches fewer pages (push: 100,000 accounts
// peaked at 338 MB, now 233-249 MB).
// The flag is read at every collection, so setting it here, after start-up, takes effect; a value
// given on the node command line is kept (node refuses it in NODE_OPTIONS).

const HEAP_GROWING_PERCENT = 50;

const FLAG = /--heap[-_]growing[-_]percent/;

/** Sets V8's heap growing factor for this process (and its worker threads) unless the user set one. */
export function keepHeapNearLiveData(): void {
  if (process.execArgv.some((arg) => FLAG.test(arg))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
