import EntitlementTokens

/// The JSON object of SPEC §6 for one token, keys in a fixed order and every
/// key always present (null when unknown), so scripts can rely on the shape.
///
/// Written straight into UTF-8 bytes (``JSONWriter``): a `verify --format
/// jsonl` run spends more time here than anywhere but the signature check,
/// so no intermediate strings are built per member.
enum JSONRenderer {
    static func write(_ outcome: Outcome, showSignedBytes: Bool, to json: inout JSONWriter) {
        json.beginObject()
        json.member("input"); json.int(outcome.input)
        json.member("source"); json.string(outcome.source)
        json.member("line"); json.int(outcome.line)
        json.member("status"); json.string(outcome.status?.rawValue)
        json.member("reason"); json.string(outcome.reason, repeating: 0)
        let token = outcome.token ?? outcome.verdict?.token
        json.member("kind"); json.string(token?.kind.rawValue)
        json.member("root"); json.string(token?.root)
        let model = token?.token  // once: each `.token` read copies the model
        json.member("issuedAt"); json.string(model?.issuedAt?.iso8601)
        json.member("expiresAt"); json.string(model?.expiresAt.iso8601)
        json.member("requestorID"); json.string(model?.requestorID)
        json.member("resourceID"); json.string(model?.resourceID, repeating: 1)
        json.member("mvpdID"); json.string(model?.mvpdID)
        json.member("fingerprint"); json.string(model?.fingerprint)
        json.member("fields")
        json.beginObject()
        if let token {
            writeFields(token.fields, to: &json)
        }
        json.endObject()
        json.member("transport"); json.string(token?.transport.description)
        json.member("signature")
        if let token {
            json.beginObject()
            json.member("form"); json.string(token.frame.signatureForm.rawValue)
            json.member("placement"); json.string(token.frame.signaturePlacement.rawValue)
            json.member("bytes"); json.int(token.signatureBytes?.count)
            json.endObject()
        } else {
            json.null()
        }
        json.member("verifiedBy"); json.string(outcome.verdict?.key?.description, repeating: 2)
        json.member("checksRun")
        // The two lists, not the whole verdict: binding the verdict would copy
        // (and retain) every reference it holds, once per token.
        if let checksRun = outcome.verdict?.checksRun, let checksSkipped = outcome.verdict?.checksSkipped {
            json.beginArray()
            for check in checksRun {
                json.element(); json.string(check.rawValue)
            }
            json.endArray()
            json.member("checksSkipped")
            json.beginArray()
            for skipped in checksSkipped {
                json.element()
                json.beginObject()
                json.member("check"); json.string(skipped.check.rawValue)
                json.member("reason"); json.string(skipped.reason)
                json.endObject()
            }
            json.endArray()
        } else {
            json.null()
            json.member("checksSkipped"); json.null()
        }
        json.member("error")
        if let error = outcome.error ?? outcome.verdict?.formatError {
            json.beginObject()
            json.member("code"); json.string(error.code.rawValue)
            json.member("stage"); json.string(error.stage.rawValue)
            json.member("message"); json.string(error.message)
            json.member("offset"); json.int(error.location?.byteOffset)
            json.member("line"); json.int(error.location?.line)
            json.member("column"); json.int(error.location?.column)
            json.endObject()
        } else {
            json.null()
        }
        json.member("warnings")
        json.beginArray()
        for warning in token?.warnings ?? [] {
            json.element(); json.string(warning)
        }
        json.endArray()
        json.member("envelope")
        if let envelope = token?.envelope {
            json.beginObject()
            // Each value in its JSON type (SPEC §6): a number stays as written.
            for field in envelope.fields {
                json.key(field.key)
                switch field.value {
                case .string(let text): json.string(text)
                case .number(let literal): json.raw(literal)
                case .bool(let value): json.raw(value ? "true" : "false")
                case .null: json.null()
                }
            }
            json.endObject()
        } else {
            json.null()
        }
        if showSignedBytes {
            json.member("signedBytes"); json.string(token.map { String(decoding: $0.signedBytes, as: UTF8.self) })
        }
        json.endObject()
    }

    /// Every field by path. A path that occurs more than once (a list, or an
    /// unknown repeated element) maps to an array of its values in document
    /// order, at the place of its first occurrence.
    private static func writeFields(_ fields: [TokenField], to json: inout JSONWriter) {
        // Usually no path repeats: then the fields go out in order, no grouping needed.
        var repeats = false
        if fields.count > 1 {
            search: for later in 1..<fields.count {
                let path = fields[later].path
                let length = path.utf8.count
                for earlier in 0..<later where fields[earlier].path.utf8.count == length && fields[earlier].path == path {
                    repeats = true
                    break search
                }
            }
        }
        guard repeats else {
            // By index: `for field in fields` would copy (retain) both strings of each field.
            for index in fields.indices {
                json.key(fields[index].path); json.string(fields[index].value, repeating: 3 + index)
            }
            return
        }
        var order: [String] = []
        var values: [String: [String]] = [:]
        for field in fields {
            if values[field.path] == nil { order.append(field.path) }
            values[field.path, default: []].append(field.value)
        }
        for path in order {
            let list = values[path]!
            json.key(path)
            if list.count == 1 {
                json.string(list[0])
            } else {
                json.beginArray()
                for value in list {
                    json.element(); json.string(value)
                }
                json.endArray()
            }
        }
    }
}

/// JSON written as UTF-8 bytes, members separated as they come, into one
/// buffer of its own (a `[UInt8]` would check uniqueness and capacity on
/// each of the few hundred appends a token's object takes).
struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Bit n set: the container at depth n has no member yet.
    private var empty: UInt64 = 0
    private var depth = 0
    /// Where each memo slot's string was last written, escaped (see
    /// ``string(_:repeating:)``).
    private var memos: [Memo?] = []

    private struct Memo {
        var text: String
        var start: Int
        var count: Int
    }

    init(capacity: Int = 4096) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// What was written so far, without a copy.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Text as it is, outside any JSON value (separators, newlines, a text block).
    mutating func raw(_ text: StaticString) {
        literal(text)
    }

    mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// `"key":`, after a comma unless it is the container's first member.
    @inline(__always) mutating func key(_ key: String) {
        element()
        string(key)
        append(UInt8(ascii: ":"))
    }

    /// The same for a key known to need no escaping (the fixed keys of an object).
    mutating func member(_ key: StaticString) {
        element()
        let length = key.utf8CodeUnitCount
        reserve(length &+ 3)
        base[count] = UInt8(ascii: "\"")
        (base + (count &+ 1)).update(from: key.utf8Start, count: length)
        base[count &+ 1 &+ length] = UInt8(ascii: "\"")
        base[count &+ 2 &+ length] = UInt8(ascii: ":")
        count &+= length &+ 3
    }

    /// The comma before an array element, unless it is the first.
    mutating func element() {
        let bit: UInt64 = 1 << UInt64(depth)
        if empty & bit != 0 {
            empty &= ~bit
        } else {
            append(UInt8(ascii: ","))
        }
    }

    mutating func null() {
        literal("null")
    }

    mutating func int(_ value: Int?) {
        guard let value else { return null() }
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var scale: UInt = 1
        while magnitude / scale >= 10 {
            scale *= 10
            digits += 1
        }
        reserve(digits)
        while digits > 0 {
            base[count] = UInt8(ascii: "0") + UInt8(magnitude / scale)
            count += 1
            magnitude %= scale
            scale /= 10
            digits -= 1
        }
    }

    /// A JSON string literal, or `null`: quotes, backslashes and control
    /// characters (and DEL) escaped, everything else as its UTF-8.
    @inline(__always) mutating func string(_ text: String?) {
        guard let text else { return null() }
        // A native string lends its UTF-8 in place; others are copied once.
        if text.utf8.withContiguousStorageIfAvailable({ appendQuoted($0) }) == nil {
            var copy = text
            copy.withUTF8 { appendQuoted($0) }
        }
    }

    /// The same, for a member whose value often repeats from one object to
    /// the next (a verdict's reason, the key that verified it, a resource): when
    /// `text` equals what was written for `slot` last time, its escaped bytes
    /// are copied from there instead of escaped again. One writer renders a
    /// chunk of consecutive tokens, so most objects after the first hit.
    mutating func string(_ text: String?, repeating slot: Int) {
        guard let text else { return null() }
        if slot < memos.count, let memo = memos[slot], memo.text == text {
            reserve(memo.count)  // first: growing moves `base`, so the source is taken after
            (base + count).update(from: base + memo.start, count: memo.count)
            count &+= memo.count
            return
        }
        let start = count
        string(text)
        if slot >= memos.count { memos.append(contentsOf: repeatElement(nil, count: slot + 1 - memos.count)) }
        memos[slot] = Memo(text: text, start: start, count: count - start)
    }

    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        // Room for the worst case (every byte as \u00XX) up front, so the
        // copying below needs no capacity checks.
        reserve(length &* 6 &+ 2)
        base[count] = UInt8(ascii: "\"")
        count &+= 1
        guard let source = utf8.baseAddress else {
            base[count] = UInt8(ascii: "\"")
            count &+= 1
            return
        }
        var runStart = 0
        var index = 0
        while index < length {
            // Eight bytes at a time while none needs escaping (the usual case).
            if index &+ 8 <= length,
               !Self.mayNeedEscaping(UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)) {
                index &+= 8
                continue
            }
            let end = min(index &+ 8, length)
            while index < end {
                let byte = source[index]
                index &+= 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
                copyRun(source + runStart, count: index &- 1 &- runStart)
                runStart = index
                switch byte {
                case UInt8(ascii: "\""): put(UInt8(ascii: "\\"), UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): put(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
                case UInt8(ascii: "\n"): put(UInt8(ascii: "\\"), UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): put(UInt8(ascii: "\\"), UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): put(UInt8(ascii: "\\"), UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    put(UInt8(ascii: "\\"), UInt8(ascii: "u"))
                    put(UInt8(ascii: "0"), UInt8(ascii: "0"))
                    put(hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0x0F)])
                }
            }
        }
        copyRun(source + runStart, count: length &- runStart)
        base[count] = UInt8(ascii: "\"")
        count &+= 1
    }

    /// Appends without a capacity check (``appendQuoted(_:)`` reserved it).
    @inline(__always) private mutating func copyRun(_ start: UnsafePointer<UInt8>, count runLength: Int) {
        guard runLength > 0 else { return }
        (base + count).update(from: start, count: runLength)
        count &+= runLength
    }

    @inline(__always) private mutating func put(_ first: UInt8, _ second: UInt8) {
        base[count] = first
        base[count &+ 1] = second
        count &+= 2
    }

    /// True when some byte of `word` is a control character, `"`, `\\` or DEL
    /// (SWAR: a byte below 0x20, or equal to one of the three; may only err
    /// towards true, which just sends those bytes through the byte loop).
    @inline(__always) private static func mayNeedEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let below = (word &- 0x20 &* ones) & ~word & high
        return below | hasZeroByte(word ^ (0x22 &* ones)) | hasZeroByte(word ^ (0x5C &* ones)) | hasZeroByte(word ^ (0x7F &* ones)) != 0
    }

    private mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    @inline(__always) private mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(count &+ extra) }
    }

    private mutating func grow(_ needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always) private mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    private mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, buffer.count > 0 else { return }
        reserve(buffer.count)
        (base + count).update(from: source, count: buffer.count)
        count &+= buffer.count
    }

    private mutating func open(_ bracket: UInt8) {
        append(bracket)
        depth += 1
        empty |= 1 << UInt64(depth)
    }

    private mutating func close(_ bracket: UInt8) {
        empty &= ~(1 << UInt64(depth))
        depth -= 1
        append(bracket)
    }
}
