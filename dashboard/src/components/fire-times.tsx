/** A cron's next fire times in its zone and UTC, with summer-time changes marked; and their live preview. */
import { useEffect, useState } from 'react';
import { request } from '../api';
import { relative, utcTime } from '../format';

interface PreviewTime {
  utc: string;
  local: string;
}

/** The UTC offset at the end of a local time (`…+02:00`). */
const offsetOf = (local: string) => /([+-]\d\d:\d\d)$/.exec(local)?.[1] ?? '';

/** Next fire times, in the schedule's zone and UTC, with the DST changes between them marked. */
export function FireTimes({ times, timezone }: { times: PreviewTime[]; timezone: string }) {
  const utc = timezone === 'UTC' || timezone === 'Etc/UTC';
  return (
    <table className="fire-times">
      <thead>
        <tr>
          <th scope="col">{timezone}</th>
          {utc ? null : <th scope="col">UTC</th>}
          <th scope="col">in</th>
        </tr>
      </thead>
      <tbody>
        {times.map((t, i) => {
          const dst = i > 0 && offsetOf(t.local) !== offsetOf(times[i - 1].local);
          return (
            <tr key={t.utc}>
              <td className="mono">
                {t.local.replace('T', ' ')}
                {dst ? (
                  <span className="badge state-paused" title="the zone's UTC offset changes before this fire (daylight saving time)">
                    DST {offsetOf(times[i - 1].local)} → {offsetOf(t.local)}
                  </span>
                ) : null}
              </td>
              {utc ? null : <td className="mono">{utcTime(t.utc)}</td>}
              <td>{relative(t.utc)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function usePreview(cron: string, timezone: string, count: number) {
  const [result, setResult] = useState<{ times: PreviewTime[] } | { error: unknown } | null>(null);
  useEffect(() => {
    if (cron.trim() === '') {
      setResult(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      request<{ times: PreviewTime[] }>('/api/v1/schedules/preview', { method: 'POST', body: { cron, ...(timezone ? { timezone } : {}), count }, signal: controller.signal })
        .then(setResult)
        .catch((error: unknown) => {
          if (!controller.signal.aborted) setResult({ error });
        });
    }, 250);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [cron, timezone, count]);
  return result;
}
