#if canImport(Glibc)
import Glibc
#endif

/// How an oracle says "this input shows a bug": print both sides of the
/// disagreement, then trap. libFuzzer catches the trap (SIGILL) and writes the
/// input to `crash-…` (Fuzz/run sets SWIFT_BACKTRACE=enable=no so that the
/// Swift runtime's own backtracer does not get there first and hang).
public func oracleFailure(_ target: String, _ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let message = printable(message)
    printError("\n==== \(target) oracle failed ====\n\(message)\n==== end ====\n")
    fatalError("\(target): \(message.prefix(400))", file: file, line: line)
}

/// Lowercase hex, for summaries that must show exact bytes.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// Text with control and non-ASCII bytes escaped, so two summaries can be
/// compared and printed whatever the input held.
func escaped(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount + 16)
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "\\"): out += [byte, byte]
        case 0x20...0x7E: out.append(byte)
        case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        default: out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}

func escaped(_ text: String) -> String { escaped(text.utf8) }

/// `text` with control bytes other than line feeds escaped, for printing.
func printable(_ text: String) -> String {
    guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }) else { return text }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped($0.utf8) }.joined(separator: "\n")
}

/// `needle` occurs as a contiguous run of `haystack`.
func contains(_ haystack: [UInt8], _ needle: some Collection<UInt8>) -> Bool {
    let needle = Array(needle)
    guard !needle.isEmpty else { return true }
    guard haystack.count >= needle.count else { return false }
    let first = needle[0]
    var start = 0
    while start + needle.count <= haystack.count {
        guard let candidate = haystack[start...(haystack.count - needle.count)].firstIndex(of: first) else { return false }
        if haystack[candidate..<(candidate + needle.count)].elementsEqual(needle) { return true }
        start = candidate + 1
    }
    return false
}

/// Unbuffered, straight to file descriptor 2 (Swift 6 forbids touching C's `stderr` global).
func printError(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { return }
        offset += written
    }
}

/// The directory of the running executable (for finding Samples/ from
/// Fuzz/.build/<triple>/<config>/FuzzVerify without trusting the cwd).
func executableDirectory() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let slash = path.lastIndex(of: "/") else { return nil }
    return String(path[..<slash])
}

func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

/// Regular files directly in `directory`, sorted, hidden ones skipped.
func files(in directory: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name.hasPrefix(".") { continue }
        let path = directory + "/" + name
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { names.append(path) }
    }
    return names.sorted()
}

func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count > 0 { bytes += chunk[0..<count] }
        if count < chunk.count { break }
    }
    return bytes
}

/// Stops the fuzzer before it starts, with a message a person can act on
/// (a missing key directory must never turn into a harness that checks nothing).
public func setupFailure(_ message: String) -> Never {
    printError("FUZZ SETUP ERROR: \(message)\n")
    exit(2)
}
