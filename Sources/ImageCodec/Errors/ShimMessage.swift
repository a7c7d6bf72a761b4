extension Array where Element == CChar {
    /// The text of a NUL-terminated message buffer the C shim filled in.
    var shimMessage: String {
        withUnsafeBufferPointer { String(decoding: $0.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }
}
