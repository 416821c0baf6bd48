/// What the parser's error messages do to text they quote.
extension String {
    var nonEmpty: String? { isEmpty ? nil : self }

    /// Without the line ends and spaces libxml2 puts at the end of its messages.
    func trimmingTrailingNewlines() -> String {
        var result = self
        while let last = result.last, last == "\n" || last == "\r" || last == " " { result.removeLast() }
        return result
    }
}
