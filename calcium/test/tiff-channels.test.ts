import { describe, expect, it } from 'vitest';
import { bytesSource, openTiff, selectPages, TiffError } from '../src/tiff/index.ts';
import { writeTiff } from './tiff-writer.ts';

const W = 5;
const H = 4;
/** A page whose every pixel encodes (channel, plane, time): c + 10 z + 100 t. */
const page = (c: number, z: number, t: number) => new Uint16Array(W * H).fill(c + 10 * z + 100 * t);

/** ScanImage page order: channels fastest, then planes, then time. */
function scanImagePages(channels: number, planes: number, times: number, extra = 0) {
  const pages: Uint16Array[] = [];
  for (let t = 0; t < times; t++) for (let z = 0; z < planes; z++) for (let c = 0; c < channels; c++) pages.push(page(c, z, t));
  for (let k = 0; k < extra; k++) pages.push(page(k % channels, 0, times));
  return pages;
}

/** The BigTIFF ScanImage 2016+ writes: settings in the block after the header and in the Software tag. */
function scanImageFile(pages: Uint16Array[], settings: string, where: 'block' | 'software') {
  const text = new TextEncoder().encode(`${settings}\n\0`);
  const block = new Uint8Array(16 + text.length);
  const dv = new DataView(block.buffer);
  dv.setUint32(0, 117637889, true);
  dv.setUint32(4, 3, true);
  dv.setUint32(8, text.length, true);
  dv.setUint32(12, 0, true);
  block.set(text, 16);
  return writeTiff({
    width: W, height: H, sampleType: 'uint16', pages, bigTiff: true, description: 'frameNumbers = 1\nacquisitionNumbers = 1\n',
    ...(where === 'block' ? { afterHeader: block } : { software: settings }),
  });
}

const SETTINGS = [
  'SI.hChannels.channelSave = [1;2]', 'SI.hFastZ.enable = true', 'SI.hStackManager.numSlices = 3', 'SI.hFastZ.discardFlybackFrames = false',
  'SI.hRoiManager.scanFrameRate = 30',
].join('\n');

async function frames(src: { frames: number; width: number; height: number; read(f: number, out: Float32Array): void | Promise<void> }) {
  const out = new Float32Array(src.width * src.height);
  const values: number[] = [];
  for (let f = 0; f < src.frames; f++) {
    await src.read(f, out);
    expect(new Set(out).size).toBe(1);
    values.push(out[0]!);
  }
  return values;
}

describe('selectPages', () => {
  for (const where of ['block', 'software'] as const) {
    it(`picks channel 2, plane 3 of a ScanImage 2 channels × 3 planes recording (settings in the ${where})`, async () => {
      const stack = await openTiff(bytesSource(scanImageFile(scanImagePages(2, 3, 4), SETTINGS, where)));
      expect(stack.metadata).toMatchObject({ source: 'scanimage', channels: 2, planes: 3, timePoints: 4, frameRate: 10 });
      const sel = selectPages(stack, { channel: 1, plane: 2 });
      expect([sel.frames, sel.width, sel.height, sel.frameRate, sel.droppedPages]).toEqual([4, W, H, 10, 0]);
      expect(Array.from({ length: 4 }, (_, f) => sel.pageOf(f))).toEqual([5, 11, 17, 23]);
      expect(await frames(sel)).toEqual([21, 121, 221, 321]);
      expect(await frames(selectPages(stack, { channel: 0, plane: 1 }))).toEqual([10, 110, 210, 310]);
    });
  }

  it('defaults to the first channel and plane, and to one channel and plane without metadata', async () => {
    const stack = await openTiff(bytesSource(writeTiff({ width: W, height: H, sampleType: 'uint16', pages: scanImagePages(1, 1, 3) })));
    const sel = selectPages(stack);
    expect([sel.frames, sel.channel, sel.plane, sel.frameRate]).toEqual([3, 0, 0, undefined]);
    expect(await frames(sel)).toEqual([0, 100, 200]);
    expect(selectPages(stack, { frameRate: 30 }).frameRate).toBe(30);
  });

  it('refuses an incomplete last volume unless told to drop it, and says how many pages', async () => {
    const stack = await openTiff(bytesSource(writeTiff({ width: W, height: H, sampleType: 'uint16', pages: scanImagePages(2, 3, 4, 4) })));
    expect(() => selectPages(stack, { channels: 2, planes: 3 })).toThrow(
      /the recording has 28 pages, not a multiple of 2 channels × 3 planes = 6: the last 4 pages would make an incomplete time point/,
    );
    const sel = selectPages(stack, { channels: 2, planes: 3, channel: 1, plane: 1, partial: 'drop' });
    expect([sel.frames, sel.droppedPages]).toEqual([4, 4]);
    expect(await frames(sel)).toEqual([11, 111, 211, 311]);
    expect(() => selectPages(stack, { channels: 2, planes: 3, order: 'tcz', partial: 'drop' })).toThrow(/in tcz order they cannot be told apart/);
  });

  it('other page orders: every frame of a slice, then the next slice (ctz)', async () => {
    const pages: Uint16Array[] = [];
    for (let z = 0; z < 3; z++) for (let t = 0; t < 4; t++) for (let c = 0; c < 2; c++) pages.push(page(c, z, t));
    const stack = await openTiff(bytesSource(writeTiff({ width: W, height: H, sampleType: 'uint16', pages })));
    expect(await frames(selectPages(stack, { channels: 2, planes: 3, order: 'ctz', channel: 1, plane: 2 }))).toEqual([21, 121, 221, 321]);
  });

  it('follows an OME-XML DimensionOrder (XYZCT: planes fastest, then channels)', async () => {
    const pages: Uint16Array[] = [];
    for (let t = 0; t < 2; t++) for (let c = 0; c < 2; c++) for (let z = 0; z < 3; z++) pages.push(page(c, z, t));
    const description = '<?xml version="1.0"?><OME><Image><Pixels DimensionOrder="XYZCT" SizeC="2" SizeZ="3" SizeT="2" TimeIncrement="0.25"/></Image></OME>';
    const stack = await openTiff(bytesSource(writeTiff({ width: W, height: H, sampleType: 'uint16', pages, description })));
    expect(stack.metadata).toMatchObject({ source: 'ome', order: 'zct', channels: 2, planes: 3, frameRate: 4 });
    const sel = selectPages(stack, { channel: 1, plane: 2 });
    expect(sel.frameRate).toBe(4);
    expect(await frames(sel)).toEqual([21, 121]);
  });

  it('refuses impossible choices with TiffErrors, and bad frame indices with RangeErrors', async () => {
    const stack = await openTiff(bytesSource(writeTiff({ width: W, height: H, sampleType: 'uint16', pages: scanImagePages(2, 3, 1) })));
    expect(() => selectPages(stack, { channels: 2, planes: 3, channel: 2 })).toThrow(/there is no channel 3: the recording has 2 channels/);
    expect(() => selectPages(stack, { channels: 2, planes: 3, plane: -1 })).toThrow(/there is no plane 0/);
    expect(() => selectPages(stack, { channels: 0 })).toThrow(TiffError);
    expect(() => selectPages(stack, { channels: 2, planes: 4 })).toThrow(/has 6 pages, fewer than one time point of 2 channels × 4 planes needs/);
    const sel = selectPages(stack, { channels: 2, planes: 3 });
    expect(() => sel.pageOf(1)).toThrow(RangeError);
    await expect(sel.read(-1, new Float32Array(W * H))).rejects.toThrow(RangeError);
  });
});
