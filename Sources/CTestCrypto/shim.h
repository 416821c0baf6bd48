// OpenSSL libcrypto for the fuzz harness's independent re-check of signatures:
// PEM public keys, EVP_DigestVerify*, ECDSA_SIG (raw r||s -> DER) and digests.
// Deliberately separate from the library's COpenSSL module, so the re-check
// shares no Swift code with the code it checks.
#ifndef TOKENINSPECT_CFUZZCRYPTO_SHIM_H
#define TOKENINSPECT_CFUZZCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/err.h>
#endif
