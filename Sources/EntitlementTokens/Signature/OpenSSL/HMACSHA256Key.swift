internal import COpenSSL

/// An HMAC-SHA-256 key (RFC 2104) with its pads already hashed: set up once,
/// then every code is made from a copy of that state, so a request sets up
/// no key. For the gate's playback sessions (docs/DESIGN.md#one-crypto-library).
///
/// A value, `Sendable`: the keyed state is only ever read (duplicated), never
/// updated in place, so one key serves every thread.
package struct HMACSHA256Key: Sendable {
    /// The length of a code in bytes.
    package static let byteCount = 32

    private let keyed: KeyedContext

    /// Fails only if OpenSSL cannot set up HMAC (no provider offers it).
    package init?(_ key: [UInt8]) {
        guard let keyed = KeyedContext(key) else { return nil }
        self.keyed = keyed
    }

    /// The code of `message`.
    package func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
        guard let context = EVP_MAC_CTX_dup(keyed.context) else { fatalError("OpenSSL could not copy an HMAC context (out of memory)") }
        defer { EVP_MAC_CTX_free(context) }
        func absorb(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { bytes.isEmpty || EVP_MAC_update(context, bytes.baseAddress, bytes.count) == 1 }
        let updated = message.withContiguousStorageIfAvailable(absorb) ?? Array(message).withUnsafeBufferPointer(absorb)
        var code = [UInt8](repeating: 0, count: Self.byteCount)
        var length = 0
        guard updated, EVP_MAC_final(context, &code, &length, code.count) == 1, length == Self.byteCount else {
            fatalError("OpenSSL could not finish an HMAC-SHA-256 code")
        }
        return code
    }

    /// Whether `code` is the code of `message`; the comparison's time does not
    /// depend on where the codes differ.
    package func isValid(_ code: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        ConstantTime.equals(authenticationCode(for: message), Array(code))
    }

    /// The `EVP_MAC_CTX` keyed once; freed with the last key value that holds it.
    private final class KeyedContext: @unchecked Sendable {
        let context: OpaquePointer

        init?(_ key: [UInt8]) {
            guard let mac = Self.hmac, let context = EVP_MAC_CTX_new(mac) else {
                OpenSSLErrorQueue.clear()
                return nil
            }
            // OSSL_PARAM keeps pointers to the name and the value: both must
            // live until the call returns, hence the nested scopes.
            // An empty key is a valid HMAC key; OpenSSL wants a non-null pointer for it.
            let keyBytes = key.isEmpty ? [0] : key
            let keyed = "digest".withCString { name in
                "SHA256".withCString { value in
                    let parameters = [OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: value), 0), OSSL_PARAM_construct_end()]
                    return keyBytes.withUnsafeBufferPointer { EVP_MAC_init(context, $0.baseAddress, key.count, parameters) == 1 }
                }
            }
            guard keyed else {
                OpenSSLErrorQueue.clear()
                EVP_MAC_CTX_free(context)
                return nil
            }
            self.context = context
        }

        deinit { EVP_MAC_CTX_free(context) }

        /// HMAC fetched once for the process (an implicit fetch per use would
        /// search the provider store, under a lock, every time).
        nonisolated(unsafe) static let hmac: OpaquePointer? = EVP_MAC_fetch(nil, "HMAC", nil)
    }
}
