import { SvcError } from '../../core/errors.js';
import { parseTilePath, TILE_WIDTH } from '../../core/tlog/tiles.js';
import type { TransparencyLog } from '../../services/transparency-log.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { receiptParams } from '../schemas/ledger.js';
import {
  checkpointQuery,
  consistencyQuery,
  consistencySchema,
  inclusionSchema,
  proofQuery,
  tileParams,
} from '../schemas/log.js';
import { textSchema } from '../schemas/system.js';

const tag = 'Transparency log';

// A checkpoint changes as the log grows; a stored one of a given size never does.
const LATEST_CACHE = 'no-cache';
const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

export function logRoutes(log: TransparencyLog): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/log/checkpoint',
      operationId: 'getCheckpoint',
      tag,
      summary: 'The newest signed checkpoint of the ledger (C2SP tlog-checkpoint)',
      description:
        'A C2SP signed note: the origin, the tree size and the base64 RFC 9162 root hash, signed with the server key (key name = origin). With size, the stored checkpoint of that size. Checkpoints are made at least every SVC_CHECKPOINT_INTERVAL while the ledger grows, and two are never inconsistent.',
      access: 'public',
      query: checkpointQuery,
      response: {
        status: 200,
        description: 'The signed note.',
        text: textSchema,
        contentType: 'text/plain; charset=utf-8',
      },
      errors: [404],
      async handle({ query, res }) {
        const stored =
          query.size === undefined
            ? await log.currentCheckpoint()
            : await log.checkpointOfSize(query.size);
        res.setHeader('Cache-Control', query.size === undefined ? LATEST_CACHE : IMMUTABLE_CACHE);
        res.type('text/plain; charset=utf-8').send(stored.note);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/log/tile/*path',
      operationId: 'getTile',
      tag,
      summary: 'A tile or an entry bundle of the log (C2SP tlog-tiles)',
      description:
        'tile/<L>/<N>[.p/<W>]: the hashes of tree level 8·L; tile/entries/<N>[.p/<W>]: the leaf data (the preimages of chain.receipt_hash), each prefixed by its length as a big-endian uint16. Full tiles never change and are cached for a year.',
      access: 'public',
      params: tileParams,
      response: {
        status: 200,
        description: 'The tile bytes.',
        text: textSchema,
        contentType: 'application/octet-stream',
      },
      errors: [404],
      async handle({ params, res }) {
        const tile = parseTilePath(params.path.join('/'));
        if (!tile) throw new SvcError('not_found', 'Not a tile path of C2SP tlog-tiles');
        const bytes = await log.tile(tile);
        res.setHeader(
          'Cache-Control',
          tile.width === TILE_WIDTH ? IMMUTABLE_CACHE : 'public, max-age=60',
        );
        res.type('application/octet-stream').send(Buffer.from(bytes));
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
        'An RFC 9162 inclusion proof of the receipt (leaf chain.sequence - 1, leaf data the preimage of chain.receipt_hash) in the tree of the newest checkpoint, or of size, with that checkpoint.',
      access: 'read',
      params: receiptParams,
      query: proofQuery,
      response: { status: 200, description: 'The proof.', schema: inclusionSchema },
      errors: [404],
      handle: ({ params, query }) => log.inclusion(params.id, query.size),
    }),
  ];
}
