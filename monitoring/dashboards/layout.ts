/**
 * Places panels on Grafana's 24-column grid: left to right, a new line when the next panel would
 * cross column 24, each line as tall as its tallest panel. Rows after the first screen are
 * collapsed: their panels are stored inside the row (Grafana queries them only when opened),
 * laid out from the line below the row as they appear when it is expanded.
 */
import type { GridPos } from '@grafana/grafana-foundation-sdk/dashboard';

export const GRID_COLUMNS = 24;

export interface Sized {
  readonly width: number;
  readonly height: number;
}

/** Grid positions of `items` packed from line `top`, and the first free line below them. */
export function pack(items: readonly Sized[], top: number): { positions: GridPos[]; bottom: number } {
  const positions: GridPos[] = [];
  let x = 0;
  let y = top;
  let lineHeight = 0;
  for (const item of items) {
    const w = Math.min(item.width, GRID_COLUMNS);
    if (x + w > GRID_COLUMNS) {
      x = 0;
      y += lineHeight;
      lineHeight = 0;
    }
    positions.push({ x, y, w, h: item.height });
    x += w;
    lineHeight = Math.max(lineHeight, item.height);
  }
  return { positions, bottom: y + lineHeight };
}
