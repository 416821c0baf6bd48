/// Why a key could not be loaded or used.
///
/// A refused key is a configuration problem that an operator has to fix, so
/// the error always says *which* file and *why*, in a line that reads like a
/// compiler diagnostic (`keys/old.pem: RSA-1024 key refused: …`). Callers and
/// tests switch on the stable ``code``; the ``message`` is for people and may
/// be reworded.
public struct KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable reason, for programs to switch on (``ErrorCode``).
    public typealias Code = ErrorCode<KeyError>

    /// The stable reason.
    public var code: Code
    /// The file path the key came from, or the `source` label the caller gave
    /// (e.g. `"inline"`).
    public var source: String
    /// One human line naming the source and the cause.
    public var message: String

    /// An error about the key named `source`.
    public init(code: Code, source: String, message: String) {
        self.code = code
        self.source = source
        self.message = message
    }

    /// Builds the message as `source: detail`, so every message names its file.
    init(_ code: Code, _ source: String, _ detail: String) {
        self.init(code: code, source: source, message: "\(source): \(detail)")
    }

    /// Equal when code and source are equal: the message is prose and may
    /// change wording without breaking callers' comparisons.
    public static func == (lhs: KeyError, rhs: KeyError) -> Bool {
        lhs.code == rhs.code && lhs.source == rhs.source
    }

    public var description: String { message }
}

extension ErrorCode where Domain == KeyError {
    /// The file or directory could not be opened or read (missing, no
    /// permission, too large to be a key file).
    public static var unreadable: Self { Self("unreadable") }
    /// The path is a FIFO, device, socket or other non-regular file. It
    /// is refused before it is read: reading a FIFO with no writer would
    /// wait forever, and reading a device may never end or have effects.
    public static var notARegularFile: Self { Self("notARegularFile") }
    /// The bytes are neither a PEM block nor DER of a supported structure,
    /// or a block is corrupt, encrypted, or of a kind this loader refuses.
    public static var unsupportedFormat: Self { Self("unsupportedFormat") }
    /// A well-formed key of a type or curve no rule in docs/DESIGN.md#signatures-and-keys covers
    /// (EC other than P-256, Ed448, DSA, X25519, an RSA-PSS key restricted
    /// to another digest, …).
    public static var unsupportedKeyType: Self { Self("unsupportedKeyType") }
    /// An RSA key under 2048 bits without the explicit opt-in.
    public static var insecureKeySize: Self { Self("insecureKeySize") }
    /// A key whose mathematics make forgery trivial or verification
    /// needlessly slow: RSA with an even exponent, one below 3 or longer
    /// than 32 bits, an even modulus or one over 16384 bits; an EC point
    /// off the curve or not of the group's order; an Ed25519 point of
    /// small order or a non-canonical encoding. Refused whatever the
    /// ``KeyLoadingOptions`` (docs/DESIGN.md#signatures-and-keys).
    public static var degenerateKey: Self { Self("degenerateKey") }
    /// An empty file, a directory that yields no usable key, or no path at all.
    public static var noKeysFound: Self { Self("noKeysFound") }
    /// A signing key was asked for and the input holds only public keys
    /// or certificates.
    public static var notAPrivateKey: Self { Self("notAPrivateKey") }
    /// OpenSSL refused to produce a signature.
    public static var signingFailed: Self { Self("signingFailed") }

    /// Every code this version of the library can give.
    public static var allCases: [Self] {
        [
            .unreadable, .notARegularFile, .unsupportedFormat, .unsupportedKeyType, .insecureKeySize, .degenerateKey, .noKeysFound, .notAPrivateKey,
            .signingFailed,
        ]
    }
}
