/**
 * The configured place holds no ledger, and the caller asked not to create one there: an
 * operator command pointed at the wrong data directory or database must not start an empty
 * ledger beside the real one.
 */
export class MissingLedgerError extends Error {
  override readonly name = 'MissingLedgerError';
}
