import { readFileSync } from 'node:fs';
import type { GithubAppConfig } from './github-app.js';

/** The App's private key: PRIVATE_KEY, else the file PRIVATE_KEY_PATH names. */
export function appPrivateKey(config: GithubAppConfig): string | undefined {
  if (config.privateKey) return config.privateKey;
  if (!config.privateKeyPath) return undefined;
  try {
    return readFileSync(config.privateKeyPath, 'utf8');
  } catch (error) {
    throw new Error(`PRIVATE_KEY_PATH ${config.privateKeyPath}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
