import type { Request, Response } from 'express';
import { parseTilePath, tilePath, TILE_WIDTH, TLOG_PROOF_MEDIA_TYPE, type Tile } from '@svc/verify';
import { z } from 'zod';
import { SvcError } from '../../core/errors.js';
import type { ReadScope } from '../../ports/ledger-queries.js';
import type { TransparencyLog } from '../../services/transparency-log.js';
import { readScopeOf } from '../read-scope.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { receiptParams } from '../schemas/ledger.js';
import {
  checkpointQuery,
  consistencyQuery,
  consistencySchema,
  inclusionSchema,
  proofQuery,
  tileParams,
  tilePathTemplates,
} from '../schemas/log.js';
import { textSchema } from '../schemas/system.js';

const tag = 'Transparency log';

// A checkpoint changes as the log grows; a stored one of a given size never does.
const LATEST_CACHE = 'no-cache';
const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
const PENDING_CACHE = 'public, max-age=60';
// While reads are private an entry bundle is an authorised read: a shared cache must not keep
// it and hand it to the next caller.
const PRIVATE_FULL_CACHE = 'private, max-age=31536000, immutable';
const PRIVATE_PENDING_CACHE = 'private, max-age=60';

const TILE_PREFIX = '/v1/log/tile/';

/**
 * The tile a request names, read from the raw request path (attacker-controlled): Express
 * decodes its wildcard segments, so `entries%2F000.p%2F6` would reach the hash-tile route as
 * an entry bundle. Only the canonical C2SP spelling is a tile: no percent-encoding, no `x000`
 * groups of leading zeros, no `.p/256`; anything else is 404, as a path that is no tile.
 */
function tileOf(req: Request): Tile {
  const raw = req.originalUrl.split('?', 1)[0] ?? '';
  const rest = raw.startsWith(TILE_PREFIX) ? raw.slice(TILE_PREFIX.length) : '';
  const tile = parseTilePath(rest);
  if (!tile || tilePath(tile) !== `tile/${rest}`)
    throw new SvcError(
      'not_found',
      'Not a tile path of C2SP tlog-tiles in its canonical form (tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], N in 3-digit groups, all but the last prefixed by x, no leading zero group, W from 1 to 255, no percent-encoding)',
    );
  return tile;
}

/** The Cache-Control a log answer carries: how long a cache may keep it. */
const cacheHeaders = (description: string) =>
  z.object({ 'Cache-Control': z.string().meta({ description }) });

const TILE_CACHE = cacheHeaders(
  'How long a cache may keep the tile: a year for a full tile (it never changes), a minute for a partial one; private for entry bundles while reads are private.',
);

const tileResponse = {
  status: 200,
  description: 'The tile bytes.',
  text: textSchema,
  contentType: 'application/octet-stream',
};

export function logRoutes(
  log: TransparencyLog,
  options: {
    publicReads: boolean;
    /** Whether the scope holds the receipt (private reads). */
    holds: (receiptId: string, scope: NonNullable<ReadScope>) => Promise<boolean>;
  },
): RouteDef[] {
  async function sendTile(tile: Tile, res: Response): Promise<void> {
    const bytes = await log.tile(tile);
    const full = tile.width === TILE_WIDTH;
    const cache =
      tile.level === 'entries' && !options.publicReads
        ? full
          ? PRIVATE_FULL_CACHE
          : PRIVATE_PENDING_CACHE
        : full
          ? IMMUTABLE_CACHE
          : PENDING_CACHE;
    res.setHeader('Cache-Control', cache);
    res.type('application/octet-stream').send(Buffer.from(bytes));
  }

  return [
    defineRoute({
      method: 'get',
      path: '/v1/log/checkpoint',
      operationId: 'getCheckpoint',
      tag,
      summary: 'The newest signed checkpoint of the ledger (C2SP tlog-checkpoint)',
      description:
        'A C2SP signed note: the origin, the tree size and the base64 RFC 9162 root hash, signed with the server key (key name = origin), followed by the cosignatures (C2SP tlog-cosignature, timestamped Ed25519, one signature line each) of the witnesses (SVC_WITNESSES) that have cosigned it so far; a client verifies the keys it trusts and ignores the others. With size, the stored checkpoint of that size (cached for a year once every configured witness has cosigned it). Checkpoints are made at least every SVC_CHECKPOINT_INTERVAL while the ledger grows, and two are never inconsistent.',
      access: 'public',
      query: checkpointQuery,
      response: {
        status: 200,
        description: 'The signed note.',
        text: textSchema,
        contentType: 'text/plain; charset=utf-8',
      },
      errors: [404],
      headers: {
        200: cacheHeaders(
          'no-cache for the newest checkpoint; for a stored one, a year once every configured witness has cosigned it, else a minute.',
        ),
      },
      async handle({ query, res }) {
        const stored =
          query.size === undefined
            ? await log.currentCheckpoint()
            : await log.checkpointOfSize(query.size);
        const { note, final } = await log.served(stored);
        // A stored checkpoint is immutable once every configured witness has cosigned it;
        // until then a cosignature may still be added.
        res.setHeader(
          'Cache-Control',
          query.size === undefined ? LATEST_CACHE : final ? IMMUTABLE_CACHE : PENDING_CACHE,
        );
        res.type('text/plain; charset=utf-8').send(note);
      },
    }),
    // Before tile/*path, which would otherwise take entry bundles too.
    defineRoute({
      method: 'get',
      path: '/v1/log/tile/entries/*path',
      operationId: 'getEntryBundle',
      tag,
      summary: 'An entry bundle of the log (C2SP tlog-tiles)',
      description:
        'tile/entries/<N>[.p/<W>]: the leaf data of 256 leaves (the preimages of chain.receipt_hash: the signed cores and attestations of the receipts), each prefixed by its length as a big-endian uint16. A read of receipts of every account: when SVC_PUBLIC_READS=false only keys the operator made readers of everything read it (403 forbidden for others), sent Cache-Control: private. Only the canonical C2SP path names a tile: other spellings, percent-encoded slashes included, are 404.',
      access: 'read',
      params: tileParams,
      documentedPaths: tilePathTemplates('entries'),
      response: tileResponse,
      errors: [403, 404],
      headers: { 200: TILE_CACHE },
      handle: ({ req, res }) => {
        const tile = tileOf(req);
        if (tile.level !== 'entries') throw new SvcError('not_found', 'Not an entry bundle path');
        // A bundle holds every account's receipts side by side: while reads are private, only
        // a key the operator made a reader of everything reads it.
        if (readScopeOf(res, options.publicReads) !== undefined)
          throw new SvcError(
            'forbidden',
            'Entry bundles hold every account’s receipts: while reads are private, only a key the operator made a reader of everything (svc keys set-reader <key> all) reads them; GET /v1/receipts/:id/proof proves your own receipts',
          );
        return sendTile(tile, res);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/log/tile/*path',
      operationId: 'getTile',
      tag,
      summary: 'A hash tile of the log (C2SP tlog-tiles)',
      description:
        'tile/<L>/<N>[.p/<W>]: the 256 (or W) hashes of tree level 8·L starting at hash 256·N, from which any proof can be computed. Full tiles never change and are cached for a year.',
      access: 'public',
      params: tileParams,
      documentedPaths: tilePathTemplates('hash'),
      response: tileResponse,
      errors: [404],
      headers: { 200: TILE_CACHE },
      // Entry bundles only through their own route, which is a read: the raw path decides,
      // never the decoded wildcard.
      handle: ({ req, res }) => {
        const tile = tileOf(req);
        if (tile.level === 'entries') throw new SvcError('not_found', 'Not a hash tile path');
        return sendTile(tile, res);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/log/consistency',
      operationId: 'getConsistencyProof',
      tag,
      summary: 'Proof that the ledger of size from is a prefix of the ledger of size to',
      description:
        'An RFC 9162 consistency proof between two tree sizes (0 <= from <= to <= the current size); with the two checkpoints, it shows the ledger only grew.',
      access: 'public',
      query: consistencyQuery,
      response: { status: 200, description: 'The proof.', schema: consistencySchema },
      handle: ({ query }) => log.consistency(query.from, query.to),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/receipts/:id/proof',
      operationId: 'getInclusionProof',
      tag,
      summary: 'Proof that a receipt is in the ledger',
      description:
        'An RFC 9162 inclusion proof of the receipt (leaf chain.sequence - 1, leaf data the preimage of chain.receipt_hash) in the tree of the newest checkpoint, or of size, with that checkpoint as GET /v1/log/checkpoint serves it (with the witnesses’ cosignatures). As JSON, or as a C2SP tlog-proof@v1 file (?format=tlog-proof, or Accept: text/x-tlog-proof): the index, the proof hashes, an empty line and the checkpoint, which svc-verify --proof checks offline with a C2SP tlog-policy. While reads are private, of the caller’s own receipts only (another account’s is 404, as an unknown one).',
      access: 'read',
      params: receiptParams,
      query: proofQuery,
      response: {
        status: 200,
        description:
          'The proof: JSON by default; the C2SP tlog-proof@v1 text with ?format=tlog-proof or Accept: text/x-tlog-proof (404 when size names a tree no checkpoint was made of).',
        schema: inclusionSchema,
        alternative: { contentType: TLOG_PROOF_MEDIA_TYPE, text: textSchema },
      },
      errors: [404],
      handle: async ({ params, query, req, res }) => {
        const scope = readScopeOf(res, options.publicReads);
        // Another account's receipt answers as one that does not exist: no existence oracle.
        if (scope !== undefined && !(await options.holds(params.id, scope)))
          throw new SvcError('not_found', `Receipt ${params.id} not found`);
        // The query wins; else the Accept header, JSON first (so */* and no header stay JSON).
        res.vary('Accept');
        const format =
          query.format ??
          (req.accepts(['application/json', TLOG_PROOF_MEDIA_TYPE]) === TLOG_PROOF_MEDIA_TYPE
            ? 'tlog-proof'
            : 'json');
        if (format === 'json') return log.inclusion(params.id, query.size);
        const text = await log.tlogProof(params.id, query.size);
        res.type(`${TLOG_PROOF_MEDIA_TYPE}; charset=utf-8`).send(text);
      },
    }),
  ];
}
