internal import COpenSSL

/// One `-----BEGIN LABEL-----` block, base64-decoded.
struct PEMBlock {
    /// The label between `BEGIN ` and the dashes ("PUBLIC KEY", "CERTIFICATE", …).
    var label: String
    /// The decoded body (DER).
    var der: [UInt8]
    /// True when the block has RFC 1421 encryption headers (`Proc-Type: 4,ENCRYPTED`).
    var hasEncryptionHeaders: Bool
    /// 1-based position in the input, for messages.
    var index: Int
}

/// Splits PEM text into blocks with OpenSSL's own PEM reader.
///
/// The reader is the one every `openssl` command uses, so whatever the CLI
/// wrote (or accepts) reads the same here: text before, between and after
/// blocks is skipped (e.g. the human dump `openssl x509 -text` prints above a
/// certificate); a block with a bad base64 body or no END line is an error.
enum PEMBlocks {
    /// True when `bytes` should be read as PEM: it contains a `-----BEGIN `
    /// line marker. DER never contains that ASCII run in practice; sniffing by
    /// content, not by file name, is the rule of docs/DESIGN.md#signatures-and-keys.
    static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        var index = 0
        let last = bytes.count - marker.count
        while index <= last {
            if bytes[index] == 0x2d, bytes[index..<(index + marker.count)].elementsEqual(marker) {
                return true
            }
            index += 1
        }
        return false
    }

    /// Every block in `bytes`, in order.
    ///
    /// - Parameter allowsNone: return no blocks, rather than throw, when no
    ///   `-----BEGIN` line starts a block at all (text that merely mentions
    ///   the marker, such as a README in a key directory).
    static func blocks(in bytes: [UInt8], source: String, allowsNone: Bool = false) throws(KeyError) -> [PEMBlock] {
        OpenSSLErrorQueue.clear()
        let result: Result<[PEMBlock], KeyError> = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(clamping: buffer.count)) else {
                return .failure(KeyError(.unreadable, source, "out of memory reading PEM"))
            }
            defer { BIO_free(bio) }
            var blocks: [PEMBlock] = []
            while true {
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                let ok = PEM_read_bio(bio, &name, &header, &data, &length)
                defer {
                    CRYPTO_free(name, nil, 0)
                    CRYPTO_free(header, nil, 0)
                    CRYPTO_free(data, nil, 0)
                }
                guard ok == 1 else {
                    // "No start line" after at least one block is the normal end.
                    if (!blocks.isEmpty || allowsNone) && OpenSSLErrorQueue.lastReason == PEM_R_NO_START_LINE {
                        OpenSSLErrorQueue.clear()
                        return .success(blocks)
                    }
                    let which = blocks.isEmpty ? "" : " after block \(blocks.count)"
                    let reason = OpenSSLErrorQueue.drain()
                    return .failure(KeyError(.unsupportedFormat, source, "malformed PEM\(which): \(reason)"))
                }
                let label = name.map { String(cString: $0) } ?? ""
                let headerText = header.map { String(cString: $0) } ?? ""
                let der =
                    (data != nil && length > 0)
                    ? Array(UnsafeBufferPointer(start: data, count: length)) : []
                blocks.append(
                    PEMBlock(
                        label: label,
                        der: der,
                        hasEncryptionHeaders: headerText.contains("ENCRYPTED"),
                        index: blocks.count + 1
                    )
                )
            }
        }
        return try result.get()
    }
}
