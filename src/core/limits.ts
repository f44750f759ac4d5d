// Input bounds of the receipt contract (§7) and the ones it leaves to us (docs/API.md, "Limits").
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_STRING_CHARS = 64 * 1024;
export const MAX_SOURCES = 256;
export const MAX_LIST_ITEMS = 256;
export const MAX_ID_CHARS = 256;
export const MAX_URI_CHARS = 2048;
