#!/bin/sh
# Makes the test certificates of this folder (run once; the files are committed): a certificate authority of the tests
# and a server certificate it signs for 127.0.0.1 and localhost, valid from 2000 to 2126 (any test machine's clock is
# within). They protect nothing: the tests use them to show an untrusted certificate stopping a push, and
# NODE_EXTRA_CA_CERTS making it trusted.
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
openssl req -newkey rsa:2048 -nodes -subj "/CN=migrate test CA" -keyout "$work/ca-key.pem" -out "$work/ca.csr"
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server-key.pem -out "$work/server.csr"
touch "$work/index.txt"
cat > "$work/ca.cnf" <<CNF
[ca]
default_ca = test
[test]
database = $work/index.txt
new_certs_dir = $work
serial = $work/serial
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = server
[any]
commonName = supplied
[authority]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign
[server]
subjectAltName = IP:127.0.0.1, DNS:localhost
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
CNF
echo 01 > "$work/serial"
openssl ca -batch -config "$work/ca.cnf" -selfsign -keyfile "$work/ca-key.pem" -in "$work/ca.csr" \
  -extensions authority -startdate 20000101000000Z -enddate 21260101000000Z -notext -out ca.pem
openssl ca -batch -config "$work/ca.cnf" -cert ca.pem -keyfile "$work/ca-key.pem" -in "$work/server.csr" \
  -startdate 20000101000000Z -enddate 21260101000000Z -notext -out server-cert.pem
