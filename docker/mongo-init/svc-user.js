/* global db, fs -- mongosh, which runs this file, provides both */
// Run once by the mongo image, on the first start of an empty data volume (before
// authentication is on): svc's own user, which may read and write its database and nothing
// else. The root user (MONGO_INITDB_ROOT_*) is for administration only.
const password = fs.readFileSync('/run/secrets/mongo_svc_password', 'utf8').replace(/\n+$/, '');
db.getSiblingDB('admin').createUser({
  user: 'svc',
  pwd: password,
  roles: [{ role: 'readWrite', db: 'svc' }],
});
