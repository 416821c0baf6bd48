import CTestXMLTree

/// A second reading of a token element, through libxml2's tree API (in
/// Sources/CTestXMLTree) instead of the library's SAX push parser: the
/// (path, value) pairs docs/FORMAT.md promises, in document order.
enum TreeReading {
    enum Outcome: Equatable {
        case fields([String])
        case notWellFormed
        case mixedContent
    }

    static func fields(of element: ArraySlice<UInt8>) -> Outcome {
        var status: Int32 = 0
        var length = 0
        let result = element.withUnsafeBufferPointer { ctest_tree_fields($0.baseAddress, $0.count, &status, &length) }
        defer { ctest_tree_free(result) }
        switch Int(status) {
        case CTEST_TREE_OK:
            guard let result, length > 0 else { return .fields([]) }
            let bytes = UnsafeRawBufferPointer(start: result, count: length)
            return .fields(bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) })
        case CTEST_TREE_MIXED_CONTENT:
            return .mixedContent
        default:
            return .notWellFormed
        }
    }
}
