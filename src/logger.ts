import { pino, type Logger } from 'pino';
import type { Config } from './config/config.js';

/**
 * One JSON line per event on stdout; API keys and signing material are redacted. `bindings`
 * are written on every line (the process and, with several workers, which one).
 */
export function createLogger(
  level: Config['logLevel'],
  bindings: Record<string, string | number> = {},
): Logger {
  return pino({
    level,
    base: { service: 'svc', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.api_key', '*.apiKey'],
  });
}
