import CDNTokens
import FoundationEssentials

/// The keys of `--cat-key`, read at start and on every reload: a key that
/// cannot be read or is not a CAT key stops the start, or fails the reload,
/// with the file's name and why.
enum CATKeyLoading {
    /// A key file is a few hundred bytes; a larger one is a mistake (a log or a bundle).
    static let maximumFileBytes = 64 * 1024

    static func load(_ settings: [CATKeySetting]) throws(GateConfigurationError) -> [CATKey] {
        var keys: [CATKey] = []
        for setting in settings {
            let type = (try? FileManager.default.attributesOfItem(atPath: setting.path))?[.type] as? FileAttributeType
            guard type == .typeRegular, let data = FileManager.default.contents(atPath: setting.path), data.count <= maximumFileBytes else {
                throw GateConfigurationError("--cat-key \(setting.path): not a readable regular file of at most 64 KiB")
            }
            do {
                keys.append(try CATKey(keyFile: [UInt8](data), id: setting.id, source: setting.path))
            } catch {
                throw GateConfigurationError("--cat-key \(setting.path): \(error.reason)")
            }
        }
        return keys
    }
}
