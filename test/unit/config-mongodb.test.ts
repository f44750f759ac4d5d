import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('MongoDB configuration', () => {
  it('is unset by default: the embedded store', () => {
    const config = loadConfig({});
    expect(config.mongodbUri).toBeUndefined();
    expect(config.mongodbDatabase).toBeUndefined();
  });

  it.each([
    'mongodb://127.0.0.1:27017/?replicaSet=rs0&directConnection=true',
    'mongodb://svc:secret@db1:27017,db2:27017,db3:27017/svc?replicaSet=rs0&tls=true',
    'mongodb+srv://svc:secret@cluster0.example.net/svc',
  ])('accepts %s', (uri) => {
    expect(loadConfig({ MONGODB_URI: uri }).mongodbUri).toBe(uri);
  });

  it.each(['http://127.0.0.1:27017', 'mongodb://', '127.0.0.1:27017', 'mongodb://a b'])(
    'refuses the URI %s, naming the variable',
    (uri) => {
      expect(() => loadConfig({ MONGODB_URI: uri })).toThrow(ConfigError);
      expect(() => loadConfig({ MONGODB_URI: uri })).toThrow(/MONGODB_URI/);
    },
  );

  it('takes a database name and refuses one MongoDB would not', () => {
    expect(loadConfig({ MONGODB_DATABASE: 'svc_prod' }).mongodbDatabase).toBe('svc_prod');
    for (const bad of ['a/b', 'a.b', 'a b', 'x'.repeat(64)]) {
      expect(() => loadConfig({ MONGODB_DATABASE: bad })).toThrow(/MONGODB_DATABASE/);
    }
  });

  it('treats an empty MONGODB_URI (common in compose files) as unset', () => {
    expect(loadConfig({ MONGODB_URI: '' }).mongodbUri).toBeUndefined();
  });
});
