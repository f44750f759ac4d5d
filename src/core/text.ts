/** Code points of a string (what GitHub and most limits call characters, unlike UTF-16 units). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      n--;
      i++;
    }
  }
  return n;
}

// Made on first use: creating a segmenter loads ICU's break rules (about 15 ms), which every
// process importing this module would otherwise pay at start-up, most never clipping a text.
let graphemes: Intl.Segmenter | undefined;
// How far back a cut looks for the start of the grapheme it would split: more than any emoji
// sequence (a family of four with skin tones is 19 code points).
const GRAPHEME_WINDOW = 32;

/**
 * `text` in at most `max` code points: unchanged when it fits, else its head and then `marker`
 * (counted in `max`). Never cuts through a surrogate pair, nor through a grapheme (an emoji
 * with its modifiers, a flag, a letter and its accents) unless one grapheme is longer than the
 * window. Pure.
 */
export function clipText(text: string, max: number, marker = ''): string {
  if (!Number.isInteger(max) || max < 0) throw new TypeError('max must be a whole number');
  // Cheap exits: UTF-16 length bounds the code-point count from above.
  if (text.length <= max) return text;
  const points = Array.from(text);
  if (points.length <= max) return text;
  const markerPoints = Array.from(marker);
  if (markerPoints.length >= max) return markerPoints.slice(0, max).join('');
  const keep = max - markerPoints.length;
  // The last grapheme boundary at or before `keep`, found in a window around it.
  const from = Math.max(0, keep - GRAPHEME_WINDOW);
  const window = points.slice(from, keep + GRAPHEME_WINDOW).join('');
  let cut = from;
  let at = from;
  graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  for (const { segment } of graphemes.segment(window)) {
    at += codePointLength(segment);
    if (at > keep) break;
    cut = at;
  }
  // No boundary in the window (one grapheme longer than it): cut on a code point instead.
  if (cut === from) cut = keep;
  return points.slice(0, cut).join('') + marker;
}
