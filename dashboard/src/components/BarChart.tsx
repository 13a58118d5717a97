import { useEffect, useRef } from 'react';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  values: number[];
}

/**
 * Bars drawn with uPlot (a small canvas chart library), one group per x label. The canvas is
 * hidden from screen readers: every chart comes with a table of the same numbers (see ChartTable).
 */
export function BarChart({
  labels,
  series,
  height = 220,
  title,
  kind = 'bars',
}: {
  labels: string[];
  series: Series[];
  height?: number;
  title: string;
  /** Bars for one series; lines (with points) compare several over time. */
  kind?: 'bars' | 'lines';
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    let chart: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    let cancelled = false;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled) return;
      const bars = UPlot.paths.bars!({ size: [0.7, 60] });
      const x = labels.map((_, i) => i);
      const width = () => Math.max(280, el.clientWidth);
      chart = new UPlot(
        {
          width: width(),
          height,
          legend: { show: false },
          cursor: { drag: { x: false, y: false } },
          scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
          axes: [
            { values: (_u, splits) => splits.map((s) => labels[Math.round(s)] ?? ''), gap: 4, size: 40 },
            { size: 44, values: (_u, splits) => splits.map((s) => (Number.isInteger(s) ? String(s) : '')) },
          ],
          series: [
            {},
            ...series.map((s) =>
              kind === 'bars'
                ? { label: s.label, stroke: s.color, fill: s.color, width: 0, paths: bars, points: { show: false } }
                : { label: s.label, stroke: s.color, width: 2, points: { show: true, size: 5, fill: s.color } },
            ),
          ],
        },
        [x, ...series.map((s) => s.values)],
        el,
      );
      observer = new ResizeObserver(() => chart?.setSize({ width: width(), height }));
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [labels, series, height, kind]);
  return (
    <figure className="chart-figure">
      <div className="legend" aria-hidden="true">
        {series.map((s) => (
          <span key={s.label} style={{ ['--swatch' as string]: s.color }}>
            {s.label}
          </span>
        ))}
      </div>
      <div ref={host} className="chart" role="img" aria-label={title} />
      <ChartTable title={title} labels={labels} series={series} />
    </figure>
  );
}

/** The chart's numbers as a table, collapsed by default: for screen readers, and for checking. */
export function ChartTable({ title, labels, series }: { title: string; labels: string[]; series: Series[] }) {
  return (
    <details>
      <summary>Numbers: {title}</summary>
      <div className="table-wrap">
        <table>
          <caption className="sr-only">{title}</caption>
          <thead>
            <tr>
              <th scope="col">&nbsp;</th>
              {series.map((s) => (
                <th scope="col" key={s.label}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {labels.map((label, i) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {series.map((s) => (
                  <td key={s.label}>{s.values[i]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
