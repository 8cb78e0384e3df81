/**
 * Reading multi-page TIFF recordings page by page: the reader, the metadata of ScanImage, ImageJ
 * and OME files, and the choice of one channel and plane. Pure (re-exports only).
 */

export { bytesSource, type ByteSource } from './source.ts';
export { openTiff, TiffError, type OpenTiffOptions, type SampleArray, type SampleType, type TiffStack } from './tiff-reader.ts';
export { recordingMetadata, type MetadataSource, type PageOrder, type RecordingMetadata } from './metadata.ts';
export { selectPages, type PagedStack, type PageSelection, type PageSelectionOptions } from './channels.ts';
