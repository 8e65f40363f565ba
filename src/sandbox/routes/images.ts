import { ApiError, badRequest } from '../errors.js';
import type { StoredFile } from '../model.js';

/** The image upload limit of the spec ("2 MB"), read as 2 MiB; a larger file answers 413. */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

export type ImageMimeType = 'image/png' | 'image/jpeg' | 'image/webp';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_SIGNATURE = Buffer.from([0xff, 0xd8, 0xff]);
const RIFF = Buffer.from('RIFF', 'ascii');
const WEBP = Buffer.from('WEBP', 'ascii');

const startsWith = (bytes: Buffer, signature: Buffer, at = 0) =>
  bytes.length >= at + signature.length && bytes.subarray(at, at + signature.length).equals(signature);

/**
 * The image type read from the file's first bytes, or undefined. The declared content type and
 * file name are never trusted: an SVG sent as `image/png` is still an SVG (spec: Organizations).
 */
export function detectImageType(bytes: Buffer): ImageMimeType | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'image/png';
  if (startsWith(bytes, JPEG_SIGNATURE)) return 'image/jpeg';
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return 'image/webp';
  return undefined;
}

/**
 * The single uploaded file of a multipart body. The multipart plugin attaches files as Buffers
 * keyed by field name; the field name is not part of the spec, so any one file field is accepted
 * (`file` is the documented name).
 */
function uploadedFile(body: unknown): Buffer {
  if (body === null || typeof body !== 'object') {
    throw badRequest('A multipart/form-data body with an image file (field "file") is required');
  }
  const files = Object.values(body).filter((value): value is Buffer => Buffer.isBuffer(value));
  const file = files[0];
  if (file === undefined) throw badRequest('The multipart body carries no file (field "file")');
  if (files.length > 1) throw badRequest('Send exactly one image file');
  return file;
}

/** The image of an upload request: 413 above 2 MB, 400 unless PNG, JPEG or WebP by signature. */
export function imageFromUpload(body: unknown): StoredFile {
  const bytes = uploadedFile(body);
  if (bytes.length > MAX_IMAGE_BYTES) {
    throw new ApiError(
      413,
      'IMAGE_TOO_LARGE',
      `The image is ${bytes.length} bytes; the limit is ${MAX_IMAGE_BYTES} bytes (2 MB)`,
    );
  }
  const mimeType = detectImageType(bytes);
  if (mimeType === undefined) {
    throw badRequest(
      'The file is not a PNG, JPEG or WebP image (checked by its signature bytes)',
      'IMAGE_TYPE_UNSUPPORTED',
    );
  }
  return { mimeType, bytes };
}

/** How an image is shown in responses: its detected type and size, never its bytes. */
export interface ImageView {
  mimeType: string;
  size: number;
}

export const imageView = (file: StoredFile | null): ImageView | null =>
  file ? { mimeType: file.mimeType, size: file.bytes.length } : null;
