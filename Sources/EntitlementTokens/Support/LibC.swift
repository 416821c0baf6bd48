#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The library's one door to the C library: the only file that imports it.
///
/// Each call is wrapped in a Swift signature that takes and returns Swift
/// values, so the pointers and `errno` stay here (docs/DESIGN.md#unsafe-code-faces-c and docs/DESIGN.md#a-concept-lives-in-one-place).
package enum LibC {}

// MARK: - Bytes

extension LibC {
    /// `memchr(3)`: the offset of the first `byte` in `buffer`, or nil.
    @inline(__always)
    static func firstOffset(of byte: UInt8, in buffer: UnsafeRawBufferPointer) -> Int? {
        guard let base = buffer.baseAddress, buffer.count > 0,
            let found = memchr(base, Int32(byte), buffer.count)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// `memcmp(3) == 0` over `count` bytes at each address.
    @inline(__always)
    static func bytesEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, count: Int) -> Bool {
        count == 0 || memcmp(lhs, rhs, count) == 0
    }
}

// MARK: - Clock and processors

extension LibC {
    /// `clock_gettime(CLOCK_REALTIME)`, in milliseconds since 1970.
    static func realtimeMillisecondsSince1970() -> Int64 {
        Int64(realtimeNanosecondsSince1970() / 1_000_000)
    }

    /// `clock_gettime(CLOCK_REALTIME)`, in nanoseconds since 1970 (a span's
    /// start and end, as OTLP carries them).
    package static func realtimeNanosecondsSince1970() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// `sysconf(_SC_NPROCESSORS_ONLN)`, read once; at least 1.
    static let onlineProcessorCount: Int = {
        let count = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return count > 0 ? Int(count) : 1
    }()

    /// One word per thread (`pthread_key_t`), 0 until the thread sets it.
    struct ThreadLocalWord: Sendable {
        private let key: pthread_key_t

        init() {
            var key = pthread_key_t()
            // Never fails short of PTHREAD_KEYS_MAX keys; the value needs no destructor.
            precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
            self.key = key
        }

        /// This thread's value.
        var value: Int {
            pthread_getspecific(key).map { Int(bitPattern: $0) } ?? 0
        }

        func set(_ value: Int) {
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: value))
        }
    }
}

// MARK: - Files

extension LibC {
    /// A failed system call: `errno`, and the system's text for it.
    package struct SystemError: Error, Equatable {
        package let number: Int32

        /// `strerror(3)`: "No such file or directory", "Permission denied"…
        package var text: String { String(cString: strerror(number)) }

        static func last() -> SystemError { SystemError(number: errno) }
    }

    /// What a path names (`S_IFMT` of its mode).
    package enum FileKind: Equatable, Sendable {
        case regular, directory, fifo, characterDevice, blockDevice, socket, other
    }

    /// `stat(2)` (symlinks followed): the kind of file `path` names; nothing is opened.
    /// - Parameter path: NUL-terminated, as the system spells it.
    static func fileKind(atPath path: [CChar]) throws(SystemError) -> FileKind {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .last() }
        return fileKind(mode: status.st_mode)
    }

    /// What a server asks of a file besides its bytes: FoundationEssentials'
    /// `FileManager` gives sizes, modes and owners as integers whose width
    /// varies with the platform (all of Foundation gave `NSNumber`s), and the
    /// gate links FoundationEssentials only (docs/DESIGN.md#the-package).
    package struct FileStatus: Equatable, Sendable {
        package let kind: FileKind
        package let size: Int
        /// The permission bits: `st_mode` without the file type (`0o640`, `0o4755`).
        package let permissions: Int
        package let groupID: UInt32
        /// The last modification, in seconds since 1970 (with its nanoseconds).
        package let modificationTime: Double
    }

    /// `getegid(2)`: the group the process acts as.
    package static var effectiveGroupID: UInt32 { UInt32(getegid()) }

    /// `stat(2)` (symlinks followed) of `path`; nothing is opened.
    package static func status(atPath path: String) throws(SystemError) -> FileStatus {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .last() }
        return FileStatus(
            kind: fileKind(mode: status.st_mode),
            size: Int(status.st_size),
            permissions: Int(status.st_mode & ~S_IFMT),
            groupID: UInt32(status.st_gid),
            modificationTime: modificationTime(of: status)
        )
    }

    /// What ``readRegularFile(atPath:byteLimit:)`` found.
    package enum FileContents: Equatable {
        case bytes([UInt8])
        /// The path was swapped for something else after the caller's check.
        case notRegular(FileKind)
        /// More than the limit, by `fstat` or by what was read.
        case tooLarge
    }

    /// The whole content of the regular file at `path`, at most `byteLimit` bytes.
    ///
    /// Opened with `O_NONBLOCK` and checked with `fstat` on the very
    /// descriptor that is read: a path swapped for a FIFO after the caller's
    /// ``fileKind(atPath:)`` can neither block the open nor be read.
    package static func readRegularFile(atPath path: [CChar], byteLimit: Int) throws(SystemError) -> FileContents {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .last() }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .last() }
        let kind = fileKind(mode: status.st_mode)
        guard kind == .regular else { return .notRegular(kind) }
        guard Int(status.st_size) <= byteLimit else { return .tooLarge }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .last()
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            // The file may grow after fstat; the bound holds for what is read.
            if bytes.count > byteLimit { return .tooLarge }
        }
        return .bytes(bytes)
    }

    /// `opendir`/`readdir`: the names directly inside the directory at
    /// `path` (with "." and ".."), as the system spells them, unsorted.
    static func directoryEntryNames(atPath path: String) throws(SystemError) -> [[CChar]] {
        guard let directory = opendir(path) else { throw .last() }
        defer { closedir(directory) }
        var names: [[CChar]] = []
        while let entry = readdir(directory) {
            names.append(
                withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
                }
            )
        }
        return names
    }

    private static func modificationTime(of status: stat) -> Double {
        #if canImport(Darwin)
        Double(status.st_mtimespec.tv_sec) + Double(status.st_mtimespec.tv_nsec) / 1_000_000_000
        #else
        Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1_000_000_000
        #endif
    }

    private static func fileKind(mode: mode_t) -> FileKind {
        switch mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFIFO: .fifo
        case S_IFCHR: .characterDevice
        case S_IFBLK: .blockDevice
        case S_IFSOCK: .socket
        default: .other
        }
    }
}

// MARK: - Standard streams

extension LibC {
    /// The standard streams' descriptors.
    package enum StandardStream: Int32, Sendable {
        case output = 1
        case error = 2
    }

    /// `write(2)` of all of `text`'s UTF-8 to `stream`, again after `EINTR`
    /// or a short write; false when the descriptor fails (a closed pipe: the
    /// text is dropped, as a log line nobody reads is).
    @discardableResult
    package static func writeAll(_ text: String, to stream: StandardStream) -> Bool {
        var text = text
        return text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(stream.rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}

/// `read(2)`, named apart from the wrappers above.
@inline(__always)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(descriptor, buffer, count)
    #elseif canImport(Musl)
    return Musl.read(descriptor, buffer, count)
    #else
    return Darwin.read(descriptor, buffer, count)
    #endif
}
