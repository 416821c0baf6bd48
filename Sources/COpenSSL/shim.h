// Umbrella header for OpenSSL libcrypto (never libssl): keys, digests and
// signatures. Only functions are used; macros Swift cannot import are avoided.
#ifndef TOKENINSPECT_COPENSSL_SHIM_H
#define TOKENINSPECT_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/rsa.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
// PKCS#12 key files, legacy ciphers (RC2-40) through the `legacy` provider, and
// randomness for minting encrypted metadata (docs/DESIGN.md#user-metadata).
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/params.h>
#include <openssl/hmac.h>
// Host names in certificates (X509_check_host), for the Redis client's tls-server-name.
#include <openssl/x509v3.h>
#endif
