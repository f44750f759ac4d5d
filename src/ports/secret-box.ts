/** Authenticated encryption of small secrets at rest, bound to a context string. */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws when the sealed text was altered or belongs to another context. */
  open(sealed: string, context: string): string;
}
