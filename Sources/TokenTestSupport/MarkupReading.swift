import CTestXMLTree

/// A page read back by libxml2 (Sources/CTestXMLTree), for the checks of the
/// HAR report's HTML: strictly as XML (a page that is not well-formed reads as
/// nil) or as libxml2's HTML parser reads it. The tests look at what a parser
/// makes of the page — which elements, which attributes, which text — not at
/// the bytes.
public struct MarkupElement: Sendable {
    public var name: String
    public var attributes: [(name: String, value: String)] = []
    public var children: [MarkupNode] = []

    public func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }

    /// The text of every text node inside, in order.
    public var text: String {
        children.map { child in
            switch child {
            case .text(let text): text
            case .element(let element): element.text
            case .comment: ""
            }
        }.joined()
    }

    /// This element and every one inside, in document order.
    public var all: [MarkupElement] {
        [self]
            + children.flatMap { child -> [MarkupElement] in
                if case .element(let element) = child { return element.all }
                return []
            }
    }
}

public enum MarkupNode: Sendable {
    case element(MarkupElement)
    case text(String)
    case comment(String)
}

public enum MarkupReading {
    /// The root element of `bytes` read as XML (nil when not well-formed), or as HTML.
    public static func root(of bytes: [UInt8], html: Bool = false) -> MarkupElement? {
        var status: Int32 = 0
        var length = 0
        let result = bytes.withUnsafeBufferPointer { ctest_markup_nodes($0.baseAddress, $0.count, html ? 1 : 0, &status, &length) }
        defer { ctest_tree_free(result) }
        guard Int(status) == CTEST_TREE_OK, let result, length > 0 else { return nil }
        let records = UnsafeRawBufferPointer(start: result, count: length).split(separator: 0, omittingEmptySubsequences: false).dropLast()
        var stack: [MarkupElement] = []
        var root: MarkupElement?
        for record in records {
            let text = String(decoding: record.dropFirst(), as: UTF8.self)
            switch record.first {
            case UInt8(ascii: "<"): stack.append(MarkupElement(name: text))
            case UInt8(ascii: "@"):
                let name = String(text.prefix { $0 != "=" })
                stack[stack.count - 1].attributes.append((name, String(text.dropFirst(name.count + 1))))
            case UInt8(ascii: "#"): stack[stack.count - 1].children.append(.text(text))
            case UInt8(ascii: "!"): stack[stack.count - 1].children.append(.comment(text))
            case UInt8(ascii: ">"):
                let element = stack.removeLast()
                if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(.element(element)) }
            default: return nil
            }
        }
        return root
    }
}
