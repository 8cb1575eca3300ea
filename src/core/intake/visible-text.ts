// "Does this message say anything?" for the platform intakes: a message of whitespace and
// invisible characters only (zero-width spaces and joiners, word joiner, BOM, bidi marks,
// variation selectors, Hangul fillers, the blank Braille pattern people use as "empty") is not a
// question, so it is dropped before the relay (no upstream call, nothing posted).

// White_Space covers Unicode spaces incl. NBSP; Default_Ignorable_Code_Point covers U+200B-U+200F,
// U+2060-U+206F, U+FEFF, U+00AD, U+034F, U+115F/U+1160, U+3164, U+FFA0, U+FE00-U+FE0F, tags, …
const INVISIBLE = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cc}\u2800]*$/u;

/** True when `text` holds at least one character a reader would see. */
export function hasVisibleText(text: string): boolean {
  return !INVISIBLE.test(text);
}
