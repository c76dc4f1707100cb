import type { ListCollector } from '../../../src/api/types.js';
import type { ListItem } from '../../../src/schema/index.js';

/** A collector that keeps every entry of a list, for tests that look at the whole list. */
export function listItems(): ListCollector<ListItem[]> {
  const items: ListItem[] = [];
  return { add: (item) => items.push(item), result: () => items };
}
