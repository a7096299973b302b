/** A processed/failed time series drawn with uPlot. */
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Point } from '../types';

/** Bumps when the system switches between light and dark, so the chart is drawn in the new colours. */
function useColorScheme(): number {
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    const onChange = () => setGeneration((g) => g + 1);
    media.addEventListener('change', onChange);
    return () => media.removeEventListener('change', onChange);
  }, []);
  return generation;
}

export function SeriesChart({ points, label, unit }: { points: Point[]; label: string; unit: 'minute' | 'day' }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const scheme = useColorScheme();
  const latest = useRef<uPlot.AlignedData>([[], [], []]);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const style = getComputedStyle(document.documentElement);
    const ok = style.getPropertyValue('--ok').trim() || '#2f855a';
    const bad = style.getPropertyValue('--bad').trim() || '#c53030';
    const axis = style.getPropertyValue('--muted').trim() || '#666';
    const width = Math.max(240, element.clientWidth);
    const options: uPlot.Options = {
      width,
      height: 180,
      series: [
        { value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toLocaleString()) },
        { label: 'processed', stroke: ok, width: 2 },
        { label: 'failed', stroke: bad, width: 2 },
      ],
      axes: [{ stroke: axis, grid: { stroke: `${axis}33` } }, { stroke: axis, grid: { stroke: `${axis}33` } }],
      scales: { x: { time: true } },
      legend: { show: true },
    };
    plot.current = new uPlot(options, latest.current, element);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(240, element.clientWidth), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [scheme]);

  useEffect(() => {
    const times = points.map((p) => Date.parse(unit === 'day' ? `${p.at}T00:00:00Z` : p.at) / 1000);
    latest.current = [times, points.map((p) => p.processed), points.map((p) => p.failed)];
    plot.current?.setData(latest.current);
  }, [points, unit, scheme]);

  const total = points.reduce((sum, p) => sum + p.processed, 0);
  const failed = points.reduce((sum, p) => sum + p.failed, 0);
  return (
    <figure className="chart">
      <figcaption>
        {label}: {total.toLocaleString('en')} processed, {failed.toLocaleString('en')} failed
      </figcaption>
      <div ref={box} className="chart-box" role="img" aria-label={`${label}: ${total} processed, ${failed} failed`} />
    </figure>
  );
}
