extension StringProtocol {
    /// The text without the leading and trailing characters for which `isTrimmed` is true.
    ///
    /// One helper for every "strip the edges" in repd: sysfs values (white space and the NUL Linux 6.1 leaves after
    /// `current_timestamp_clock`), manifest fields (spaces, tabs, `\r`).
    public func trimming(while isTrimmed: (Character) -> Bool) -> String {
        var slice = Substring(self)
        while let first = slice.first, isTrimmed(first) { slice.removeFirst() }
        while let last = slice.last, isTrimmed(last) { slice.removeLast() }
        return String(slice)
    }
}
