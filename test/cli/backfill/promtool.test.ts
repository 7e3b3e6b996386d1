/**
 * The TSDB step with the real promtool: a window file becomes one block, a file promtool refuses
 * is one sentence (promtool_failed, exit 1), promtool is found on PATH only when executable, and
 * the printed copy step gives the blocks the data directory's owner.
 */
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BackfillError } from '../../../src/cli/backfill/errors.js';
import { copyStep, createAllBlocks, findOnPath, manualStep } from '../../../src/cli/backfill/promtool.js';
import { scratchDir } from '../../support/scratch.js';
import { promtool as promtoolTool } from '../../support/tools.js';

const promtool = promtoolTool();

describe('finding promtool and the printed steps', () => {
  it('finds only an executable promtool on PATH', () => {
    const dir = scratchDir('backfill-path-');
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    writeFileSync(join(dir, 'a', 'promtool'), '#!/bin/sh\n');
    writeFileSync(join(dir, 'b', 'promtool'), '#!/bin/sh\n');
    chmodSync(join(dir, 'b', 'promtool'), 0o755);
    expect(findOnPath('promtool', `${join(dir, 'a')}::${join(dir, 'b')}`)).toBe(join(dir, 'b', 'promtool'));
    expect(findOnPath('promtool', '')).toBeUndefined();
  });

  it('prints the copy step with the chown that gives the blocks the data directory\'s owner', () => {
    const text = copyStep('/srv/out/blocks', 3);
    expect(text).toContain('TSDB blocks written to /srv/out/blocks (3).');
    expect(text).toContain('for b in /srv/out/blocks/*/; do cp -r "$b" "$DATA"/ && chown -R --reference="$DATA" "$DATA/$(basename "$b")" || break; done');
    expect(manualStep('/srv/out/openmetrics', '/srv/out/blocks')).toContain('for f in /srv/out/openmetrics/*.om; do promtool tsdb create-blocks-from openmetrics --max-block-duration=162h "$f" /srv/out/blocks || break; done');
  });
});

describe.skipIf(promtool.path === undefined)(`promtool${promtool.skipReason ? ` (${promtool.skipReason})` : ''}`, () => {
  it('makes one block per window file and reports each file done', async () => {
    const dir = scratchDir('backfill-promtool-');
    const file = join(dir, 'w.om');
    writeFileSync(file, '# TYPE x counter\nx_total{a="b"} 0 1700000000.000\nx_total{a="b"} 1 1700000015.000\n# EOF\n');
    const done: number[] = [];
    await createAllBlocks(promtool.path ?? 'promtool', [file], join(dir, 'blocks'), (count) => done.push(count));
    expect(done).toEqual([1]);
    expect(readdirSync(join(dir, 'blocks'))).toHaveLength(1);
  });

  it('turns promtool\'s refusal into promtool_failed, one sentence', async () => {
    const dir = scratchDir('backfill-promtool-bad-');
    const file = join(dir, 'w.om');
    writeFileSync(file, 'x_total{a="b" 1 1700000000\n');
    const failure = await createAllBlocks(promtool.path ?? 'promtool', [file], join(dir, 'blocks'), () => undefined).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BackfillError);
    expect(failure).toMatchObject({ code: 'promtool_failed', exitCode: 1 });
    expect((failure as Error).message).toMatch(/^promtool could not create blocks from the OpenMetrics file: /);
  });
});
