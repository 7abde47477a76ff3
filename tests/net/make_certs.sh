#!/usr/bin/env bash
# Test certificates for the TLS tests (loopback only, never trusted anywhere else):
#
#   tests/net/make_certs.sh [DIR]      # DIR defaults to build/tls (from the repository root)
#
# writes, with the openssl CLI (EC P-256 keys, SHA-256 signatures, valid 7 days):
#
#   ca.pem, ca.key                 a test CA (basicConstraints critical CA:TRUE, keyUsage
#                                  keyCertSign + cRLSign)
#   server.pem, server.key         a server certificate for `localhost` signed by that CA
#                                  (SAN DNS:localhost, IP:127.0.0.1; extendedKeyUsage
#                                  serverAuth; keyUsage digitalSignature; CA:FALSE)
#   other-ca.pem, other-ca.key     a second, unrelated CA (the "wrong CA" cases)
#
# Idempotent and fast: when the set is already there, still valid for a day and the server
# certificate verifies against ca.pem, nothing is done. Concurrent runs are serialized with
# flock, and a new set is written to a temporary folder and moved in place, so a reader never
# sees half a set.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${1:-$ROOT/build/tls}"
OPENSSL="${OPENSSL:-openssl}"
DAYS=7

fresh() {
    local d="$1"
    for f in ca.pem ca.key server.pem server.key other-ca.pem other-ca.key; do
        [[ -s "$d/$f" ]] || return 1
    done
    for f in ca.pem server.pem other-ca.pem; do
        "$OPENSSL" x509 -in "$d/$f" -noout -checkend 86400 >/dev/null 2>&1 || return 1
    done
    "$OPENSSL" verify -CAfile "$d/ca.pem" "$d/server.pem" >/dev/null 2>&1 || return 1
}

mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if fresh "$DIR"; then
    exit 0
fi

TMP="$(mktemp -d "$DIR.new.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/ca.cnf" <<'CNF'
[req]
distinguished_name = dn
prompt = no
x509_extensions = v3_ca
[dn]
O = panto tests
CN = panto test CA
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
CNF
sed 's/CN = panto test CA/CN = panto unrelated test CA/' "$TMP/ca.cnf" >"$TMP/other-ca.cnf"

cat >"$TMP/server.ext" <<'CNF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
CNF

key() { "$OPENSSL" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

for ca in ca other-ca; do
    key "$TMP/$ca.key"
    "$OPENSSL" req -new -x509 -sha256 -days "$DAYS" -key "$TMP/$ca.key" -config "$TMP/$ca.cnf" \
        -set_serial "0x$("$OPENSSL" rand -hex 8)" -out "$TMP/$ca.pem"
done

key "$TMP/server.key"
"$OPENSSL" req -new -sha256 -key "$TMP/server.key" -subj "/O=panto tests/CN=localhost" \
    -out "$TMP/server.csr"
"$OPENSSL" x509 -req -sha256 -days "$DAYS" -in "$TMP/server.csr" -CA "$TMP/ca.pem" \
    -CAkey "$TMP/ca.key" -set_serial "0x$("$OPENSSL" rand -hex 8)" -extfile "$TMP/server.ext" \
    -out "$TMP/server.pem" 2>/dev/null

"$OPENSSL" verify -CAfile "$TMP/ca.pem" "$TMP/server.pem" >/dev/null
if "$OPENSSL" verify -CAfile "$TMP/other-ca.pem" "$TMP/server.pem" >/dev/null 2>&1; then
    echo "make_certs.sh: the server certificate verifies against the other CA" >&2
    exit 1
fi
rm -f "$TMP"/*.cnf "$TMP"/*.ext "$TMP"/*.csr
chmod 600 "$TMP"/*.key

rm -rf "$DIR.old"
[[ -e "$DIR" ]] && mv "$DIR" "$DIR.old"
mv "$TMP" "$DIR"
trap - EXIT
rm -rf "$DIR.old"
