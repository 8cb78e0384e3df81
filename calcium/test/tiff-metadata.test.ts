import { describe, expect, it } from 'vitest';
import { recordingMetadata } from '../src/tiff/index.ts';

const lines = (...l: string[]) => l.join('\n');

describe('recordingMetadata: ScanImage', () => {
  const si2018 = lines(
    'SI.LINE_FORMAT_VERSION = 1',
    "SI.VERSION_MAJOR = '2018b'",
    'SI.hChannels.channelSave = [1;2]',
    'SI.hFastZ.discardFlybackFrames = true',
    'SI.hFastZ.enable = true',
    'SI.hFastZ.numDiscardFlybackFrames = 1',
    'SI.hRoiManager.scanFrameRate = 30',
    'SI.hScan2D.logAverageFactor = 1',
    'SI.hStackManager.framesPerSlice = 1',
    'SI.hStackManager.numSlices = 3',
  );

  it('ScanImage 2016+ fast-Z (settings in the Software tag): channels, planes, flyback, volume rate', () => {
    const m = recordingMetadata('frameNumbers = 1\nframeTimestamps_sec = 0.000', 240, si2018);
    expect(m).toEqual({ source: 'scanimage', channels: 2, planes: 3, framesPerVolume: 4, frameRate: 7.5, scanFrameRate: 30, order: 'czt', timePoints: 40 });
    expect(recordingMetadata(undefined, 240, `${si2018}\nSI.hRoiManager.scanVolumeRate = 7.4`).frameRate).toBe(7.4);
  });

  it('one channel written as a scalar, no stack, log averaging', () => {
    const m = recordingMetadata(undefined, 100, lines('SI.hChannels.channelSave = 2', 'SI.hRoiManager.scanFrameRate = 30', 'SI.hScan2D.logAverageFactor = 3', 'SI.hStackManager.numSlices = 1'));
    expect(m).toMatchObject({ channels: 1, planes: 1, frameRate: 10, scanFrameRate: 30, order: 'czt', timePoints: 100 });
  });

  it('ScanImage 2020+: the stack switched off wins over numSlices; fast stack mode and actual slices', () => {
    const off = recordingMetadata(undefined, 10, lines('SI.hStackManager.enable = false', 'SI.hStackManager.numSlices = 5', 'SI.hChannels.channelSave = [1 2 3]'));
    expect(off).toMatchObject({ channels: 3, planes: 1 });
    const on = recordingMetadata(undefined, 10, lines(
      'SI.hStackManager.enable = true', "SI.hStackManager.stackMode = 'fast'", 'SI.hStackManager.actualNumSlices = 4',
      'SI.hStackManager.numSlices = 9', 'SI.hStackManager.numFramesPerVolumeWithFlyback = 6', 'SI.hRoiManager.scanFrameRate = 60',
      'SI.hChannels.channelSave = 1',
    ));
    expect(on).toMatchObject({ channels: 1, planes: 4, framesPerVolume: 6, frameRate: 10, order: 'czt' });
  });

  it('ScanImage 5 (2015) keys in the description, with hFastZ.numSlices', () => {
    const d = lines('scanimage.SI.hChannels.channelSave = [1;2]', 'scanimage.SI.hFastZ.enable = 1', 'scanimage.SI.hFastZ.numSlices = 3', 'scanimage.SI.hRoiManager.scanFrameRate = 15');
    expect(recordingMetadata(d, 60)).toMatchObject({ source: 'scanimage', channels: 2, planes: 3, framesPerVolume: 3, frameRate: 5, timePoints: 10 });
  });

  it('ScanImage 4', () => {
    const d = lines('scanimage.SI4.channelsSave = [1;2]', 'scanimage.SI4.scanFrameRate = 4.5', 'scanimage.SI4.fastZEnable = 1', 'scanimage.SI4.stackNumSlices = 5',
      'scanimage.SI4.fastZDiscardFlybackFrames = 1', 'scanimage.SI4.fastZNumDiscardFrames = 1');
    expect(recordingMetadata(d, 100)).toMatchObject({ source: 'scanimage', channels: 2, planes: 5, framesPerVolume: 6, frameRate: 0.75, timePoints: 10 });
  });

  it('ScanImage 3 slow stack (\\r line ends): every frame of a slice, then the next slice', () => {
    const d = "state.configPath='C:\\cfg'\rstate.acq.numberOfZSlices=3\rstate.acq.numberOfFrames=10\rstate.acq.frameRate=7.8125\rstate.acq.numberOfChannelsSave=1\r";
    expect(recordingMetadata(d, 30)).toMatchObject({ source: 'scanimage', channels: 1, planes: 3, frameRate: 7.8125, order: 'ctz', timePoints: 10 });
  });

  it('a ScanImage 2016+ slow stack with framesPerSlice', () => {
    const m = recordingMetadata(undefined, 60, lines('SI.hFastZ.enable = false', 'SI.hStackManager.numSlices = 3', 'SI.hStackManager.framesPerSlice = 20', 'SI.hRoiManager.scanFrameRate = 30'));
    expect(m).toMatchObject({ planes: 3, order: 'ctz', frameRate: 30 });
  });
});

describe('recordingMetadata: ImageJ, OME and others', () => {
  it('an ImageJ hyperstack with finterval', () => {
    const d = 'ImageJ=1.53t\nimages=600\nchannels=2\nslices=3\nframes=100\nhyperstack=true\nmode=composite\nfinterval=0.1\nloop=false\n';
    expect(recordingMetadata(d, 600)).toEqual({ source: 'imagej', channels: 2, planes: 3, framesPerVolume: 3, frameRate: 10, scanFrameRate: undefined, order: 'czt', timePoints: 100 });
  });

  it('ImageJ time units and fps', () => {
    expect(recordingMetadata('ImageJ=1.54f\nimages=50\nframes=50\nfinterval=25\ntunit=ms\n', 50).frameRate).toBeCloseTo(40);
    expect(recordingMetadata('ImageJ=1.54f\nimages=50\nfps=20\n', 50)).toMatchObject({ frameRate: 20, scanFrameRate: 20, channels: 1, planes: 1 });
    expect(recordingMetadata('ImageJ=1.54f\nimages=50\n', 50).frameRate).toBeUndefined();
  });

  it('OME-XML: sizes, dimension order and time increment with units', () => {
    const xml = '<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0">'
      + '<Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint16" SizeX="512" SizeY="512" SizeC="2" SizeZ="3" SizeT="10" TimeIncrement="50" TimeIncrementUnit="ms">'
      + '<Channel ID="Channel:0:0"/></Pixels></Image></OME>';
    expect(recordingMetadata(xml, 60)).toEqual({ source: 'ome', channels: 2, planes: 3, framesPerVolume: 3, frameRate: 20, scanFrameRate: undefined, order: 'zct', timePoints: 10 });
    const prefixed = "<ome:OME><ome:Image><ome:Pixels SizeT='5' TimeIncrement='0.5' DimensionOrder='XYCZT'/></ome:Image></ome:OME>";
    expect(recordingMetadata(prefixed, 5)).toMatchObject({ source: 'ome', channels: 1, planes: 1, frameRate: 2, scanFrameRate: 2, order: 'czt' });
  });

  it('anything else: one channel, one plane, no rate', () => {
    expect(recordingMetadata(undefined, 7)).toEqual({ source: 'unknown', channels: 1, planes: 1, order: 'czt', timePoints: 7 });
    expect(recordingMetadata('Prairie View 5.4, some camera', 7).source).toBe('unknown');
    expect(recordingMetadata('{"shape": [10, 64, 64]}', 10).source).toBe('unknown');
  });
});
