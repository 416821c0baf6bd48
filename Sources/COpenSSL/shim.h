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
// SHA-256 on a state the caller holds, a plain struct copied by value: no
// allocation and no provider lookup per hash, where an EVP_MD_CTX or an
// EVP_MAC_CTX has both (docs/DESIGN.md#one-crypto-library). OpenSSL 3 marks these
// functions deprecated in favour of EVP; they remain its SHA-256 code. The
// wrappers keep the deprecation warning out of every Swift file that hashes.
#include <openssl/sha.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int tokeninspect_sha256_init(SHA256_CTX *state) { return SHA256_Init(state); }
static inline int tokeninspect_sha256_update(SHA256_CTX *state, const void *bytes, size_t count) {
    return SHA256_Update(state, bytes, count);
}
static inline int tokeninspect_sha256_final(unsigned char *digest, SHA256_CTX *state) { return SHA256_Final(digest, state); }
#pragma GCC diagnostic pop
#endif
