/**
 * The records sync_external_data upserts when its payload names no `url`: a small, fixed list
 * shaped like a CRM's users, so that `taskline dev` and its external-sync schedule work on a
 * machine without network. Set SYNC_URL (or the payload's `url`) to sync a real HTTP source.
 */
export const SAMPLE_SOURCE = 'sample';

export const SAMPLE_RECORDS: readonly { id: number; name: string; email: string; company: string }[] = [
  { id: 1, name: 'Ada Lovelace', email: 'ada@example.com', company: 'Analytical Engines' },
  { id: 2, name: 'Grace Hopper', email: 'grace@example.com', company: 'COBOL Works' },
  { id: 3, name: 'Edsger Dijkstra', email: 'edsger@example.com', company: 'Shortest Paths' },
  { id: 4, name: 'Barbara Liskov', email: 'barbara@example.com', company: 'Substitution Ltd' },
  { id: 5, name: 'Donald Knuth', email: 'don@example.com', company: 'TeX Type' },
];
