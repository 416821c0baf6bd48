import CDNTokens

/// The keys of `--cat-key`, read at start and on every reload: a key that
/// cannot be read or is not a CAT key stops the start, or fails the reload,
/// with the file's name and why. The reading is the library's
/// (``CATKeyFile``), which `tokeninspect har --cat-key` shares.
enum CATKeyLoading {
    static func load(_ settings: [CATKeySetting]) throws(GateConfigurationError) -> [CATKey] {
        var keys: [CATKey] = []
        for setting in settings {
            do { keys.append(try CATKeyFile(path: setting.path, id: setting.id).load()) } catch { throw GateConfigurationError(error.message) }
        }
        return keys
    }
}
