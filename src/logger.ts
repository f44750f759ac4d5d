import { pino, type Logger } from 'pino';
import type { Config } from './config/config.js';

/** One JSON line per event on stdout; API keys and signing material are redacted. */
export function createLogger(level: Config['logLevel']): Logger {
  return pino({
    level,
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.api_key', '*.apiKey'],
  });
}
