/// A command as RESP sends it: an array of bulk strings.
///
/// Arguments are bytes, never interpolated into text, so a key or password
/// holding spaces, CR or LF cannot change the command.
public struct RESPCommand: Sendable, Hashable {
    public let arguments: [[UInt8]]

    public init(_ arguments: [[UInt8]]) {
        precondition(!arguments.isEmpty, "a command has a name")
        self.arguments = arguments
    }

    public init(_ arguments: String...) {
        self.init(arguments.map { Array($0.utf8) })
    }

    /// The command's first argument, for messages (never its other arguments,
    /// which can hold a password).
    public var name: String { String(decoding: arguments[0], as: UTF8.self).uppercased() }

    /// Appends the command's wire form.
    public func encode(into bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + encodedByteCount)
        bytes.append(UInt8(ascii: "*"))
        Self.appendDecimal(arguments.count, to: &bytes)
        bytes.append(contentsOf: RESPSyntax.lineEnd)
        for argument in arguments {
            bytes.append(UInt8(ascii: "$"))
            Self.appendDecimal(argument.count, to: &bytes)
            bytes.append(contentsOf: RESPSyntax.lineEnd)
            bytes.append(contentsOf: argument)
            bytes.append(contentsOf: RESPSyntax.lineEnd)
        }
    }

    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    /// Bytes on the wire: what counts against a connection's bound on outstanding bytes.
    public var encodedByteCount: Int {
        var total = 1 + Self.decimalDigits(arguments.count) + 2
        for argument in arguments {
            total += 1 + Self.decimalDigits(argument.count) + 2 + argument.count + 2
        }
        return total
    }

    /// A count's digits, written in place: `String(count).utf8` allocated a
    /// string per argument of every command.
    private static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    private static func decimalDigits(_ value: Int) -> Int {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits
    }
}
