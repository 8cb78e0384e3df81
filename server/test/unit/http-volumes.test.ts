/** Pure parts of volume serving: Range and Accept-Encoding parsing, and the raw-path checks of /volumes. */
import { describe, expect, it } from 'vitest';
import { acceptsGzip, parseRange } from '../../src/http/send-file.ts';
import { isVolumePath, volumeSegments } from '../../src/http/volumes.ts';

describe('parseRange', () => {
  it('follows RFC 9110 for one byte range', () => {
    expect(parseRange(undefined, 100)).toEqual({ kind: 'none' });
    expect(parseRange('bytes=0-9', 100)).toEqual({ kind: 'range', start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ kind: 'range', start: 90, end: 99 });
    expect(parseRange('bytes=-5', 100)).toEqual({ kind: 'range', start: 95, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ kind: 'range', start: 0, end: 99 });
    expect(parseRange('bytes=50-500', 100)).toEqual({ kind: 'range', start: 50, end: 99 });
    expect(parseRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-0', 0)).toEqual({ kind: 'unsatisfiable' });
    for (const ignored of ['bytes=5-3', 'bytes=0-1,4-5', 'bytes=-', 'lines=0-1', 'bytes=a-b']) expect(parseRange(ignored, 100), ignored).toEqual({ kind: 'none' });
  });
});

describe('acceptsGzip', () => {
  it('reads q-values and wildcards', () => {
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('br;q=1.0, gzip;q=0.8')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*;q=0.5, gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});

describe('volume paths', () => {
  it('routes every raw path under /volumes here, before normalisation', () => {
    expect(isVolumePath('/volumes/../api/me')).toBe(true);
    expect(isVolumePath('/VOLUMES/x')).toBe(true);
    expect(isVolumePath('http://host:1/volumes/x')).toBe(true);
    expect(isVolumePath('/api/volumes/x/y/histogram')).toBe(false);
  });

  it('decodes plain segments and refuses anything that could escape', () => {
    expect(volumeSegments('/volumes')).toEqual([]);
    expect(volumeSegments('/volumes/')).toEqual([]);
    expect(volumeSegments('/volumes/a%20b/c/info?x=1')).toEqual(['a b', 'c', 'info']);
    expect(volumeSegments('/volumes/a/z/.zarray')).toEqual(['a', 'z', '.zarray']);
    for (const bad of ['/volumes/..', '/volumes/a/%2E%2e/b', '/volumes/a%2Fb', '/volumes/a%5Cb', '/volumes/a\\b', '/volumes//a', '/volumes/a/%00', '/volumes/.hidden', '/volumes/%ZZ', '/volumes/a/%0a'])
      expect(() => volumeSegments(bad), bad).toThrow(/refused/);
  });
});
