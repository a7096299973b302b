/**
 * Keyboard navigation: `/` focuses the search box, `j`/`k` move through the rows of the page's
 * list, Enter opens the row, `g` then a letter goes to a page, `?` shows the keys. Keys typed into
 * a field are the field's.
 */
import { useEffect } from 'react';
import { navigate } from './router';

export const GO_KEYS: [string, string, string][] = [
  ['o', '/', 'Overview'],
  ['q', '/queues', 'Queues'],
  ['d', '/dead', 'Dead letter'],
  ['s', '/schedules', 'Schedules'],
  ['l', '/workflows', 'Workflows'],
  ['w', '/workers', 'Workers'],
  ['f', '/search', 'Search'],
  ['a', '/audit', 'Audit log'],
];

function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (!element) return false;
  return element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName);
}

function moveRow(step: number): void {
  const rows = [...document.querySelectorAll<HTMLElement>('[data-row]')];
  if (rows.length === 0) return;
  const current = rows.indexOf(document.activeElement as HTMLElement);
  const next = current < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, current + step));
  rows[next].focus();
  rows[next].scrollIntoView({ block: 'nearest' });
}

export function useKeyboard(toggleHelp: () => void): void {
  useEffect(() => {
    let pendingG = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      if (pendingG) {
        pendingG = false;
        const target = GO_KEYS.find(([key]) => key === event.key);
        if (target) {
          event.preventDefault();
          navigate(target[1]);
        }
        return;
      }
      if (event.key === '/') {
        event.preventDefault();
        document.querySelector<HTMLInputElement>('#search-box')?.focus();
      } else if (event.key === 'j') moveRow(1);
      else if (event.key === 'k') moveRow(-1);
      else if (event.key === 'Enter') {
        const row = (event.target as HTMLElement | null)?.closest?.('[data-row]');
        const link = row?.querySelector<HTMLAnchorElement>('a[href]');
        if (link && event.target === row) {
          event.preventDefault();
          link.click();
        }
      } else if (event.key === '?') toggleHelp();
      else if (event.key === 'g') {
        pendingG = true;
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => (pendingG = false), 1500);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      if (timer) clearTimeout(timer);
    };
  }, [toggleHelp]);
}
