import EntitlementTokens

/// `inspect --emit xml`: each token's decoded XML, byte for byte, for other
/// tools — `xmllint`, or with `--show-signed-bytes` just the bytes the
/// signature covers, for `openssl dgst -verify`.
///
/// The bytes are the token's own, so they are written unescaped only when
/// stdout is not a terminal; on a terminal they are escaped like every other
/// input-derived text (a forged token must not drive it).
struct XMLEmission {
    var inputs: [InputSource]
    var decoderConfiguration: DecoderConfiguration
    /// Only the signed bytes (the token element), with nothing added.
    var signedBytesOnly: Bool
    var terminal = Terminal.current

    /// Exit status per docs/DESIGN.md#exit-codes: 0 every token decoded, 1 one did not, 2 nothing usable.
    func run() -> Int32 {
        let output = OutputStream.standardOutput
        let errors = OutputStream.standardError
        let decoder = TokenDecoder(configuration: decoderConfiguration)
        var decoded = 0
        var failed = 0
        let unreadable = inputs.forEachRecord(configuration: decoderConfiguration, output: output, errors: errors) { input, record in
            let result: Result<DecodedToken, TokenError>
            if let error = record.error {
                result = .failure(error)
            } else {
                result = Result { () throws(TokenError) in try decoder.decode(record.bytes, envelope: record.envelope) }
            }
            switch result {
            case .success(let token):
                decoded += 1
                write(signedBytesOnly ? Array(token.signedBytes) : token.xml, to: output)
            case .failure(let error):
                failed += 1
                output.flush()
                errors.write("tokeninspect: error: \(input.name):\(record.line): \(error.description)\n")
                errors.flush()
            }
        }
        output.flush()
        if decoded + failed == 0 && !unreadable {
            errors.write("tokeninspect: error: no token found in the input\n")
            errors.flush()
            return 2
        }
        if unreadable { return 2 }
        return failed > 0 ? 1 : 0
    }

    /// The XML as decoded; the whole token ends with a line break (the signed
    /// bytes get nothing added: a digest over them must match the signature).
    private func write(_ bytes: [UInt8], to output: OutputStream) {
        if terminal.stdoutIsTerminal {
            output.write("\(String(decoding: bytes, as: UTF8.self))\n")
            return
        }
        bytes.withUnsafeBytes { output.write($0) }
        if !signedBytesOnly, bytes.last != UInt8(ascii: "\n") {
            [UInt8(ascii: "\n")].withUnsafeBytes { output.write($0) }
        }
    }
}
