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
/// and the library's key loading has no Foundation dependency.
enum KeyFiles {
    /// Larger files are refused: a key or certificate bundle is kilobytes,
    /// and a misconfigured `--key /dev/zero` must not read forever.
    static let maximumFileSize = 1 << 20

    enum Kind { case directory, file }

    /// Whether `path` is a directory (following symlinks) or something to read.
    static func kind(of path: String) throws(KeyError) -> Kind {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw KeyError(.unreadable, path, "cannot read key: \(lastErrorText())")
        }
        return (status.st_mode & S_IFMT) == S_IFDIR ? .directory : .file
    }

    /// The whole content of the file at `path` (at most ``maximumFileSize`` bytes).
    static func read(_ path: String) throws(KeyError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw KeyError(.unreadable, path, "cannot read key: \(lastErrorText())")
        }
        defer { close(descriptor) }
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
            if bytes.count > maximumFileSize {
                throw KeyError(.unreadable, path,
                    "larger than \(maximumFileSize / 1024) KiB; not a key file")
            }
        }
        return bytes
    }

    /// The key files of a directory: every regular file (symlinks followed,
    /// so Kubernetes-style secret mounts work), not hidden, not in
    /// subdirectories, sorted by the bytes of the name so the order (and so
    /// which of two equal keys is reported) never depends on the locale.
    static func entries(ofDirectory path: String) throws(KeyError) -> [String] {
        guard let directory = opendir(path) else {
            throw KeyError(.unreadable, path, "cannot list key directory: \(lastErrorText())")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }  // ".", "..", hidden files, "..data" of secret mounts
            names.append(name)
        }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let base = path.hasSuffix("/") ? path : path + "/"
        var files: [String] = []
        for name in names {
            let full = base + name
            var status = stat()
            guard stat(full, &status) == 0 else {
                // A dangling symlink: a key the operator meant to trust is gone.
                throw KeyError(.unreadable, full, "cannot read key: \(lastErrorText())")
            }
            if (status.st_mode & S_IFMT) == S_IFREG { files.append(full) }
        }
        return files
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
