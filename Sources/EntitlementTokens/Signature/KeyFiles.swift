/// Reads key files and key directories, with errors that name the path.
///
/// Plain POSIX calls (through ``LibC``) rather than Foundation: the messages then carry the
/// system's own reason (`No such file or directory`, `Permission denied`),
/// the library's key loading has no Foundation dependency, and the file type
/// can be checked on the very descriptor that is read.
package enum KeyFiles {
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
    package static func read(_ path: String) throws(KeyError) -> [UInt8] {
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
        var names: [[CChar]]
        do {
            names = try LibC.directoryEntryNames(atPath: path)
        } catch {
            throw KeyError(.unreadable, path, "cannot list key directory: \(error.text)")
        }
        names.removeAll { $0.first == CChar(UInt8(ascii: ".")) }
        names.sort { $0.lexicographicallyPrecedes($1) { UInt8(bitPattern: $0) < UInt8(bitPattern: $1) } }
        let base = Array((path.hasSuffix("/") ? path : path + "/").utf8).map { CChar(bitPattern: $0) }
        var entries: [DirectoryEntry] = []
        for name in names {
            let systemPath = base + name + [0]
            let display = String(decoding: (base + name).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            entries.append(
                DirectoryEntry(
                    path: display,
                    systemPath: systemPath,
                    type: try type(ofSystemPath: systemPath, display: display)
                )
            )
        }
        return entries
    }

    /// "…: is a FIFO (named pipe), not a regular file; refused without reading it".
    static func notRegularDetail(_ what: String) -> String {
        "is \(what), not a regular file; refused without reading it"
    }

    // MARK: Implementation

    private static func type(ofSystemPath systemPath: [CChar], display: String) throws(KeyError) -> FileType {
        do {
            return fileType(try LibC.fileKind(atPath: systemPath))
        } catch {
            throw KeyError(.unreadable, display, "cannot read key: \(error.text)")
        }
    }

    private static func read(systemPath: [CChar], display path: String) throws(KeyError) -> [UInt8] {
        // stat first: a FIFO or device is never opened (opening a FIFO
        // blocks until a writer comes; opening a device may act on it).
        switch try type(ofSystemPath: systemPath, display: path) {
        case .regular: break
        case .directory: throw KeyError(.unreadable, path, "cannot read key: is a directory, not a key file")
        case .other(let what): throw KeyError(.notARegularFile, path, notRegularDetail(what))
        }
        // The read itself rechecks the type on the opened descriptor (a path
        // swapped for a FIFO between the check above and the open).
        let contents: LibC.FileContents
        do {
            contents = try LibC.readRegularFile(atPath: systemPath, byteLimit: maximumFileSize)
        } catch {
            throw KeyError(.unreadable, path, "cannot read key: \(error.text)")
        }
        switch contents {
        case .bytes(let bytes): return bytes
        case .notRegular(let kind): throw KeyError(.notARegularFile, path, notRegularDetail(description(of: kind)))
        case .tooLarge: throw KeyError(.unreadable, path, "larger than \(maximumFileSize / 1024) KiB; not a key file")
        }
    }

    private static func fileType(_ kind: LibC.FileKind) -> FileType {
        switch kind {
        case .regular: .regular
        case .directory: .directory
        default: .other(description(of: kind))
        }
    }

    private static func description(of kind: LibC.FileKind) -> String {
        switch kind {
        case .fifo: "a FIFO (named pipe)"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .socket: "a socket"
        case .directory: "a directory"
        case .regular, .other: "a special file"
        }
    }
}
