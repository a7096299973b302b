/** How many fires a scheduler instance recorded in the last minute (for the registry): counts per second, older ones dropped as read. */
const MINUTE_MS = 60_000;

export class FireTally {
  private readonly perSecond = new Map<number, number>();

  count(now: number): void {
    const second = Math.floor(now / 1000);
    this.perSecond.set(second, (this.perSecond.get(second) ?? 0) + 1);
  }

  lastMinute(now: number): number {
    const from = Math.floor((now - MINUTE_MS) / 1000);
    let total = 0;
    for (const [second, n] of this.perSecond) {
      if (second <= from) this.perSecond.delete(second);
      else total += n;
    }
    return total;
  }
}
