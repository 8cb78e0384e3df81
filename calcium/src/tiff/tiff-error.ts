/**
 * The one error the TIFF reader throws for a file it cannot read. Pure.
 */

/**
 * A TIFF file this reader cannot read: truncated, corrupt, or using a feature it does not support.
 * Messages are written for the person who recorded the file and number pages from 1, as ImageJ/Fiji do.
 */
export class TiffError extends Error {
  override name = 'TiffError';
}
