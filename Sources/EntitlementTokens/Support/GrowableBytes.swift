/// A growable run of bytes that owns its memory: the library's one byte
/// buffer (the parser's path and text scratch space, the JSON writer's output).
///
/// Appending is a capacity check and a copy, and emptying or shortening it
/// only moves its end: a `[UInt8]` would check uniqueness and go through
/// generic range replacement on each of the dozens of appends per token.
/// Readers get the bytes as a `Span`, which is bounds-checked.
struct GrowableBytes: ~Copyable {
    // Unsafe by design: Support/ owns the one growable byte buffer (docs/DESIGN.md#unsafe-code-faces-c).
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 64) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The bytes written so far, without a copy.
    @inline(__always)
    func withSpan<Result, Failure: Error>(_ body: (Span<UInt8>) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(Span(_unsafeElements: UnsafeBufferPointer(start: base, count: count)))
    }

    /// The bytes decoded as UTF-8 (invalid sequences become U+FFFD).
    var string: String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    /// A copy of the bytes.
    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ bytes: Span<UInt8>) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// For code that faces C (libxml2 hands over a pointer and a length).
    @inline(__always)
    mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, buffer.count > 0 else { return }
        reserve(buffer.count)
        (base + count).update(from: source, count: buffer.count)
        count &+= buffer.count
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends a copy of the bytes already written at `range` (the JSON
    /// writer repeating a value it escaped before).
    mutating func appendCopy(of range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        reserve(range.count)  // first: growing moves `base`, so the source is taken after
        (base + count).update(from: base + range.lowerBound, count: range.count)
        count &+= range.count
    }

    /// Lets `body` write up to `maximumCount` bytes in place at the end and
    /// keeps the number it returns: one capacity check for a whole run of
    /// small writes (the JSON writer's escaping). `body` must write exactly
    /// the bytes it counts, and no more than `maximumCount`.
    @inline(__always)
    mutating func appendInPlace(maximumCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(maximumCount)
        let written = body(base + count)
        precondition(written >= 0 && written <= maximumCount, "wrote outside the reserved room")
        count &+= written
    }

    mutating func removeAll() {
        count = 0
    }

    /// Keeps the first `length` bytes.
    mutating func truncate(to length: Int) {
        count = min(count, max(0, length))
    }

    /// Room for `extra` more bytes without growing.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(count &+ extra) }
    }

    @inline(never)
    private mutating func grow(_ needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
