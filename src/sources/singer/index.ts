export { SingerSourceError } from './errors.js';
export {
  createSingerSource,
  SINGER_STATE_STREAM,
  type SingerInput,
  type SingerSource,
  type SingerSourceProps,
} from './singer-source.js';
