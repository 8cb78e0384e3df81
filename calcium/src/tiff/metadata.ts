/**
 * What a recording's TIFF metadata says about its layout: channels, planes, the order in which
 * pages interleave them, and the frame rate. Reads ScanImage (3, 4, 5/2015, 2016 and later),
 * ImageJ/Fiji hyperstack and OME-XML descriptions. Pure (string parsing only).
 */

/**
 * The order in which pages run through channel (c), plane (z) and time (t), fastest first — OME's
 * DimensionOrder without the XY. ScanImage fast-Z, ImageJ and most OME files are 'czt': channel
 * 1, 2 of plane 1, then of plane 2, …, then the next volume.
 */
export type PageOrder = 'czt' | 'ctz' | 'zct' | 'ztc' | 'tcz' | 'tzc';

/** Which software's metadata the layout comes from. */
export type MetadataSource = 'scanimage' | 'imagej' | 'ome' | 'unknown';

/** A recording's layout as its metadata describes it. */
export interface RecordingMetadata {
  /** Frames per second of one channel-and-plane series (volumes per second when planes > 1), when known. */
  frameRate?: number;
  /** Rate at which the microscope scanned single frames (planes), when known; equals frameRate for one plane. */
  scanFrameRate?: number;
  /** Channels saved (pages per plane per time point). */
  channels: number;
  /** Planes saved per volume. */
  planes: number;
  /** Frames scanned per volume including flyback frames that were not saved (ScanImage fast-Z); set when planes > 1. */
  framesPerVolume?: number;
  /** Whole time points the pages hold: floor(pages / (channels × planes)). */
  timePoints: number;
  order: PageOrder;
  source: MetadataSource;
}

/**
 * The layout a TIFF's metadata describes. `description` is the first page's ImageDescription;
 * `scanImageHeader` is ScanImage 2016+'s settings text (its Software tag, or the block after the
 * BigTIFF header), which older ScanImage versions put in the description instead.
 */
export function recordingMetadata(description: string | undefined, pages: number, scanImageHeader?: string): RecordingMetadata {
  const d = description ?? '';
  let m: Omit<RecordingMetadata, 'timePoints'>;
  if (/^\s*ImageJ=/.test(d)) m = imagej(d);
  else if (/^\s*(<\?xml[^>]*>\s*)?<(\w+:)?OME\b/.test(d) || /<(\w+:)?Pixels\b/.test(d)) m = ome(d);
  else if (isScanImage(scanImageHeader) || isScanImage(d)) m = scanimage(`${scanImageHeader ?? ''}\n${d}`);
  else m = { channels: 1, planes: 1, order: 'czt', source: 'unknown' };
  const per = m.channels * m.planes;
  return { ...m, timePoints: per > 0 ? Math.floor(Math.max(0, pages) / per) : 0 };
}

/** The `images=` count of an ImageJ description (ImageJ stores stacks over 4 GB with one directory and this count). */
export function imagejImageCount(description: string | undefined): number | undefined {
  if (description === undefined || !/^\s*ImageJ=/.test(description)) return undefined;
  return positiveInt(keyValues(description, '=').get('images'));
}

function isScanImage(text: string | undefined): boolean {
  return text !== undefined && /(^|[\r\n])\s*(scanimage\.)?(SI\.|SI4\.|state\.acq\.)/.test(text);
}

/** `key = value` lines (any line ending) as a map; later keys win. */
function keyValues(text: string, sep: string): Map<string, string> {
  const kv = new Map<string, string>();
  for (const line of text.split(/\r\n|\r|\n/)) {
    const i = line.indexOf(sep);
    if (i > 0) kv.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return kv;
}

function num(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const s = v.trim().replace(/^'(.*)'$/, '$1');
  if (s === 'true') return 1;
  if (s === 'false') return 0;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

function positiveInt(v: string | undefined): number | undefined {
  const n = num(v);
  return n !== undefined && Number.isInteger(n) && n >= 1 ? n : undefined;
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** How many numbers a MATLAB value lists: `[1;2]`, `[1 2]`, `1`, `[]`. */
function listLength(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  return (v.match(/[-+]?\d+(\.\d+)?/g) ?? []).length;
}

function scanimage(text: string): Omit<RecordingMetadata, 'timePoints'> {
  // ScanImage 5 (2015) prefixes its keys with "scanimage."; 2016+ writes "SI.…"; 4 writes
  // "scanimage.SI4.…"; 3 writes "state.acq.…=…" lines ending in \r.
  const kv = new Map<string, string>();
  for (const [k, v] of keyValues(text, '=')) kv.set(k.replace(/^scanimage\./, ''), v);
  const n = (...keys: string[]): number | undefined => {
    for (const k of keys) {
      const v = num(kv.get(k));
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const str = (k: string): string | undefined => kv.get(k)?.replace(/^'(.*)'$/, '$1');

  const scanFrameRate = positive(n('SI.hRoiManager.scanFrameRate', 'SI4.scanFrameRate', 'state.acq.frameRate'));
  const channelList = listLength(kv.get('SI.hChannels.channelSave') ?? kv.get('SI4.channelsSave'));
  const channels = Math.max(1, channelList ?? Math.round(n('state.acq.numberOfChannelsSave') ?? 1));
  const fastZ = n('SI.hFastZ.enable', 'SI4.fastZEnable') === 1 || str('SI.hStackManager.stackMode') === 'fast';
  const slices = Math.max(1, Math.round(
    n('SI.hStackManager.actualNumSlices', 'SI.hStackManager.numSlices', 'SI.hFastZ.numSlices', 'SI4.stackNumSlices', 'state.acq.numberOfZSlices') ?? 1,
  ));
  // ScanImage 2020+ says whether the stack is on; before, a stack is on when fast-Z is or there are several slices.
  const stackOn = n('SI.hStackManager.enable');
  const planes = (stackOn === undefined ? fastZ || slices > 1 : stackOn === 1) ? slices : 1;
  // Frames logged as one averaged frame (ScanImage 2016+).
  const averaging = Math.max(1, Math.round(n('SI.hScan2D.logAverageFactor') ?? 1));
  const base = { scanFrameRate, channels, source: 'scanimage' as const };

  if (planes === 1) return { ...base, frameRate: scanFrameRate && scanFrameRate / averaging, planes, order: 'czt' };
  if (fastZ) {
    const discard = n('SI.hFastZ.discardFlybackFrames', 'SI4.fastZDiscardFlybackFrames') === 1;
    const flyback = discard ? Math.max(0, Math.round(n('SI.hFastZ.numDiscardFlybackFrames', 'SI4.fastZNumDiscardFrames') ?? 0)) : 0;
    const framesPerVolume = Math.max(planes, Math.round(
      n('SI.hStackManager.numFramesPerVolumeWithFlyback', 'SI.hFastZ.numFramesPerVolume') ?? planes + flyback,
    ));
    const volumeRate = positive(n('SI.hRoiManager.scanVolumeRate'));
    return { ...base, frameRate: volumeRate ?? (scanFrameRate && scanFrameRate / framesPerVolume), planes, framesPerVolume, order: 'czt' };
  }
  // A slow (motor) stack: every frame of one slice, then the next slice.
  const perSlice = Math.round((n('SI.hStackManager.framesPerSlice', 'SI4.acqNumFrames', 'state.acq.numberOfFrames') ?? 1) / averaging);
  if (perSlice > 1) return { ...base, frameRate: scanFrameRate && scanFrameRate / averaging, planes, framesPerVolume: planes, order: 'ctz' };
  // One frame per slice: the time between volumes includes motor moves the file does not give.
  return { ...base, planes, framesPerVolume: planes, order: 'czt' };
}

/** Seconds per unit of ImageJ's `tunit` / OME's TimeIncrementUnit. */
function secondsPer(unit: string | undefined): number | undefined {
  const u = (unit ?? 's').trim().toLowerCase();
  if (u === 's' || u === 'sec' || u === 'second' || u === 'seconds') return 1;
  if (u === 'ms' || u === 'msec') return 1e-3;
  if (u === 'us' || u === 'µs' || u === 'μs' || u === 'usec') return 1e-6;
  if (u === 'ns') return 1e-9;
  if (u === 'min') return 60;
  if (u === 'h' || u === 'hr' || u === 'hour') return 3600;
  return undefined;
}

function imagej(d: string): Omit<RecordingMetadata, 'timePoints'> {
  const kv = keyValues(d, '=');
  const channels = positiveInt(kv.get('channels')) ?? 1;
  const planes = positiveInt(kv.get('slices')) ?? 1;
  const interval = positive(num(kv.get('finterval')));
  const unit = secondsPer(kv.get('tunit'));
  const fps = positive(num(kv.get('fps')));
  const frameRate = interval !== undefined && unit !== undefined ? 1 / (interval * unit) : fps;
  const scanFrameRate = frameRate !== undefined && planes === 1 ? frameRate : undefined;
  return { frameRate, scanFrameRate, channels, planes, framesPerVolume: planes > 1 ? planes : undefined, order: 'czt', source: 'imagej' };
}

function ome(xml: string): Omit<RecordingMetadata, 'timePoints'> {
  const tag = /<(?:\w+:)?Pixels\b([^>]*)>/.exec(xml)?.[1] ?? '';
  const attrs = new Map<string, string>();
  for (const m of tag.matchAll(/([\w:]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs.set(m[1]!, m[2] ?? m[3] ?? '');
  const channels = positiveInt(attrs.get('SizeC')) ?? 1;
  const planes = positiveInt(attrs.get('SizeZ')) ?? 1;
  const dims = (attrs.get('DimensionOrder') ?? 'XYCZT').toUpperCase();
  const order = (/^XY[CZT]{3}$/.test(dims) && new Set(dims.slice(2)).size === 3 ? dims.slice(2).toLowerCase() : 'czt') as PageOrder;
  const increment = positive(num(attrs.get('TimeIncrement')));
  const unit = secondsPer(attrs.get('TimeIncrementUnit'));
  const frameRate = increment !== undefined && unit !== undefined ? 1 / (increment * unit) : undefined;
  const scanFrameRate = frameRate !== undefined && planes === 1 ? frameRate : undefined;
  return { frameRate, scanFrameRate, channels, planes, framesPerVolume: planes > 1 ? planes : undefined, order, source: 'ome' };
}
