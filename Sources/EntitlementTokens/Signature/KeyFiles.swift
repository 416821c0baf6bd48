#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Reads key files and key directories, with errors that name the path.
///
/// Plain POSIX calls rather than Foundation: the messages then carry the
/// system's own reason (`No such file or directory`, `Permission denied`),
/// the library's key loading has no Foundation dependency, and the file type
/// can be checked on the very descriptor that is read.
enum KeyFiles {
    /// Larger files are refused: a key or certificate bundle is kilobytes,
    /// and a misconfigured `--key /dev/zero` must not read forever.
    static let maximumFileSize = 1 << 20

    /// What a path names, symlinks followed.
    enum FileType: Equatable {
        case regular
        case directory
        /// A FIFO, device, socket…: never opened. The text names it for people.
        case other(String)
    }

    /// One entry of a key directory.
    struct DirectoryEntry {
        /// The path for messages. A name that is not valid UTF-8 shows with
        /// U+FFFD here; ``systemPath`` keeps its real bytes.
        var path: String
        /// The NUL-terminated path as the system spells it, for opening.
        var systemPath: [CChar]
        var type: FileType
    }

    /// What `path` names, by `stat(2)`: nothing is opened.
    static func type(of path: String) throws(KeyError) -> FileType {
        try type(ofSystemPath: Array(path.utf8CString), display: path)
    }

    /// The whole content of the regular file at `path` (at most
    /// ``maximumFileSize`` bytes).
    ///
    /// - Throws: `notARegularFile` for a FIFO, device or socket (refused
    ///   before it is opened, so `--key /tmp/fifo` never hangs), `unreadable`.
    static func read(_ path: String) throws(KeyError) -> [UInt8] {
        try read(systemPath: Array(path.utf8CString), display: path)
    }

    /// The content of a directory entry found by ``entries(ofDirectory:)``.
    static func read(_ entry: DirectoryEntry) throws(KeyError) -> [UInt8] {
        try read(systemPath: entry.systemPath, display: entry.path)
    }

    /// The entries directly inside the directory at `path`, hidden ones
    /// (`.name`: ".", "..", the `..data` of Kubernetes secret mounts) left
    /// out, sorted by the bytes of the name so the order (and so which of two
    /// equal keys is reported) never depends on the locale. Symlinks are
    /// followed to find each entry's type.
    ///
    /// - Throws: `unreadable` when the directory cannot be listed, or for a
    ///   dangling symlink: a key the operator meant to trust is gone.
    static func entries(ofDirectory path: String) throws(KeyError) -> [DirectoryEntry] {
        guard let directory = opendir(path) else {
            throw KeyError(.unreadable, path, "cannot list key directory: \(lastErrorText())")
        }
        defer { closedir(directory) }
        var names: [[CChar]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
            }
            if name.first == CChar(UInt8(ascii: ".")) { continue }
            names.append(name)
        }
        names.sort { $0.lexicographicallyPrecedes($1) { UInt8(bitPattern: $0) < UInt8(bitPattern: $1) } }
        let base = Array((path.hasSuffix("/") ? path : path + "/").utf8).map { CChar(bitPattern: $0) }
        var entries: [DirectoryEntry] = []
        for name in names {
            let systemPath = base + name + [0]
            let display = String(decoding: (base + name).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            entries.append(DirectoryEntry(
                path: display, systemPath: systemPath,
                type: try type(ofSystemPath: systemPath, display: display)
            ))
        }
        return entries
    }

    /// "…: is a FIFO (named pipe), not a regular file; refused without reading it".
    static func notRegularDetail(_ what: String) -> String {
        "is \(what), not a regular file; refused without reading it"
    }

    // MARK: Implementation

    private static func type(ofSystemPath systemPath: [CChar], display: String) throws(KeyError) -> FileType {
        var status = stat()
        guard stat(systemPath, &status) == 0 else {
            throw KeyError(.unreadable, display, "cannot read key: \(lastErrorText())")
        }
        return fileType(status.st_mode)
    }

    private static func read(systemPath: [CChar], display path: String) throws(KeyError) -> [UInt8] {
        // stat first: a FIFO or device is never opened (opening a FIFO
        // blocks until a writer comes; opening a device may act on it).
        switch try type(ofSystemPath: systemPath, display: path) {
        case .regular: break
        case .directory: throw KeyError(.unreadable, path, "cannot read key: is a directory, not a key file")
        case .other(let what): throw KeyError(.notARegularFile, path, notRegularDetail(what))
        }
        // O_NONBLOCK and fstat close the race with a path swapped for a FIFO
        // between the stat above and this open: the open cannot block, and
        // the check below is on what was actually opened.
        let descriptor = open(systemPath, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw KeyError(.unreadable, path, "cannot read key: \(lastErrorText())")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw KeyError(.unreadable, path, "cannot read key: \(lastErrorText())")
        }
        guard case .regular = fileType(status.st_mode) else {
            throw KeyError(.notARegularFile, path, notRegularDetail(description(ofMode: status.st_mode)))
        }
        guard Int(status.st_size) <= maximumFileSize else { throw tooLarge(path) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { posixRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw KeyError(.unreadable, path, "cannot read key: \(lastErrorText())")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            // The file may grow after fstat; the bound holds for what is read.
            if bytes.count > maximumFileSize { throw tooLarge(path) }
        }
        return bytes
    }

    private static func tooLarge(_ path: String) -> KeyError {
        KeyError(.unreadable, path, "larger than \(maximumFileSize / 1024) KiB; not a key file")
    }

    private static func fileType(_ mode: mode_t) -> FileType {
        switch mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        default: .other(description(ofMode: mode))
        }
    }

    private static func description(ofMode mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFDIR: "a directory"
        default: "a special file"
        }
    }

    private static func lastErrorText() -> String {
        String(cString: strerror(errno))
    }
}

/// `read(2)`, named apart from the ``KeyFiles/read(_:)`` above.
@inline(__always)
private func posixRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(descriptor, buffer, count)
    #elseif canImport(Musl)
    return Musl.read(descriptor, buffer, count)
    #else
    return Darwin.read(descriptor, buffer, count)
    #endif
}
