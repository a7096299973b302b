/**
 * Most items one script call takes: a script unpacks a batch into one Redis call, and Redis's
 * Lua unpacks at most ~8,000 values (two per item in an HSET).
 */
const SCRIPT_BATCH = 1000;

/**
 * The indexes of `items` (all, or those given) grouped by queue, each queue's in calls of at
 * most `size`, in order (pipelined, so still in order in Redis).
 */
export function chunksByQueue(items: readonly { queue: string }[], indexes: readonly number[] = items.map((_, i) => i), size = SCRIPT_BATCH): [string, number[]][] {
  const byQueue = new Map<string, number[]>();
  for (const index of indexes) {
    const list = byQueue.get(items[index].queue);
    if (list) list.push(index);
    else byQueue.set(items[index].queue, [index]);
  }
  const chunks: [string, number[]][] = [];
  for (const [queue, indexes] of byQueue) {
    for (let start = 0; start < indexes.length; start += size) chunks.push([queue, indexes.slice(start, start + size)]);
  }
  return chunks;
}
